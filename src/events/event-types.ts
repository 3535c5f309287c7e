/**
 * Event types as modules declare them, and the catalog they fold into. The envelope is CloudEvents
 * 1.0 (DECISIONS.md "Event envelope"); the durable log and delivery build on these declarations.
 */
import type { TSchema } from 'typebox';

/** One event type a module emits: what it is, its data schema, and who may receive it. */
export interface EventTypeDecl {
  /** `<noun>.<past verb>`, e.g. `agent.created` */
  type: string;
  /** CloudEvents `source`: `/svc/<module>` */
  source: string;
  description: string;
  /** the permission a subscriber's role needs to receive it (e.g. `agent:read`) */
  permission: string;
  stability: 'stable' | 'beta';
  /** the schema of `data` */
  schema: TSchema;
  /**
   * `false`: never written to the durable event log, so no subscription can receive it (the
   * subscription API refuses it); the bus refuses to publish any other type without a transaction.
   */
  durable?: false;
}

/** Whether events of this declaration are written to the durable log (what deliveries are made from). */
export const isDurable = (d: EventTypeDecl): boolean => d.durable !== false;

/** What a publisher hands the bus; the bus stamps id and time. */
export interface EventInput {
  type: string;
  tenant: string;
  /** `<kind>/<id>` */
  subject: string;
  data: Record<string, unknown>;
  traceparent?: string;
}

/** An event as subscribers see it (CloudEvents attributes, plus the tenant). */
export interface BusEvent extends EventInput {
  id: string;
  source: string;
  time: string;
  /** the per-tenant sequence of the durable log; absent for an event published without a transaction */
  sequence?: number;
}

const TYPE_RE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** Every declared event type; a duplicate or malformed type refuses startup, naming it. */
export class EventCatalog {
  readonly #types = new Map<string, EventTypeDecl>();

  constructor(decls: readonly EventTypeDecl[] = []) {
    for (const d of decls) this.add(d);
  }

  add(decl: EventTypeDecl): void {
    if (!TYPE_RE.test(decl.type)) throw new Error(`event type ${JSON.stringify(decl.type)} is not <noun>.<past verb>`);
    if (this.#types.has(decl.type)) throw new Error(`event type ${decl.type} is declared twice`);
    this.#types.set(decl.type, decl);
  }

  get(type: string): EventTypeDecl | undefined {
    return this.#types.get(type);
  }

  list(): EventTypeDecl[] {
    return [...this.#types.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  }
}
