/**
 * The typed in-process event bus. Events are published only after the change they announce has
 * committed (`withEvents` stages them and publishes when the work resolves; a throw discards them),
 * so a subscriber never hears of a rolled-back change. An event emitted with the change's
 * transaction (`emit(event, tx)`, `record(tx, …)`) is also written to the durable event log in that
 * transaction (event-log.ts), with its per-tenant sequence: what webhook deliveries are made from. Each subscriber has its own bounded
 * queue
 * drained on its own async loop: a slow subscriber delays only itself, never a request, and a full
 * queue drops (counted in `svc_bus_dropped_total`) instead of growing without bound.
 */
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { newId } from '../store/ids.js';
import { nowTimestamp } from '../ledger/time.js';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import { appendEvents } from './event-log.js';
import { currentIntentScope, outsideIntentScope } from '../ledger/audit-intent.js';
import { isDurable, type BusEvent, type EventCatalog, type EventInput } from './event-types.js';

/**
 * Stages events. With `tx`, they are written to the durable log inside that transaction (await
 * it): they commit or roll back with the change. Without, only a `durable: false` type may be
 * staged; it is announced in-process only.
 */
export type Emit = (event: EventInput | readonly EventInput[], tx?: Transaction<Database>) => void | Promise<void>;

/** A binding that carries announced events to other replicas (nats-binding.ts). */
export interface RemoteBinding {
  readonly kind: 'nats';
  publish(events: readonly BusEvent[]): void;
  status(): { kind: 'nats'; connected: boolean; servers: string[] };
}

export type EventHandler = (event: BusEvent) => void | Promise<void>;

export interface SubscribeOptions {
  /** a name for stats and logs */
  name: string;
  /** event types, or `*` for every type */
  types: readonly string[] | '*';
  /** queued events before drops (default: the bus's) */
  queueLimit?: number;
}

export interface BusOptions {
  catalog: EventCatalog;
  log?: Logger;
  registry?: Registry;
  /** default per-subscriber queue bound */
  queueLimit?: number;
}

/** Per-subscriber figures for `/v1/console/bus`. */
export interface SubscriberStats {
  name: string;
  types: readonly string[] | '*';
  depth: number;
  delivered: number;
  dropped: number;
  failed: number;
}

class Subscriber {
  readonly queue: BusEvent[] = [];
  delivered = 0;
  dropped = 0;
  failed = 0;
  running = false;
  idle: Promise<void> = Promise.resolve();
  constructor(
    readonly opts: SubscribeOptions,
    readonly handler: EventHandler,
    readonly limit: number,
  ) {}
  wants(type: string): boolean {
    return this.opts.types === '*' || this.opts.types.includes(type);
  }
}

export class EventBus {
  readonly catalog: EventCatalog;
  readonly #subs = new Set<Subscriber>();
  readonly #log: Logger | undefined;
  readonly #limit: number;
  readonly #dropped: Counter<'subscriber'> | undefined;
  #published = 0;
  #remote: RemoteBinding | undefined;

  constructor(opts: BusOptions) {
    this.catalog = opts.catalog;
    this.#log = opts.log;
    this.#limit = opts.queueLimit ?? 10_000;
    if (opts.registry) {
      this.#dropped = new Counter({
        name: 'svc_bus_dropped_total',
        help: 'Events a subscriber of the in-process bus dropped because its queue was full.',
        labelNames: ['subscriber'] as const,
        registers: [opts.registry],
      });
      const subs = this.#subs;
      new Gauge({
        name: 'svc_bus_queue_depth',
        help: 'Events waiting in in-process bus subscriber queues.',
        registers: [opts.registry],
        collect() {
          let n = 0;
          for (const s of subs) n += s.queue.length;
          this.set(n);
        },
      });
    }
  }

  /** Adds a subscriber; returns the function that removes it. */
  subscribe(opts: SubscribeOptions, handler: EventHandler): () => void {
    const sub = new Subscriber(opts, handler, opts.queueLimit ?? this.#limit);
    this.#subs.add(sub);
    return () => this.#subs.delete(sub);
  }

  /**
   * Runs `work` with a stage for events; publishes them once it resolves (after its commit), drops
   * them if it throws. Events emitted with a transaction are in the durable log already; a rolled
   * back transaction takes them with it.
   */
  async withEvents<T>(work: (emit: Emit) => Promise<T>): Promise<T> {
    const staged: EventInput[] = [];
    const recorded: BusEvent[] = [];
    const result = await work((e, tx) => {
      const list: readonly EventInput[] = Array.isArray(e) ? e : [e as EventInput];
      if (!tx) {
        for (const one of list) this.#assertInProcess(one.type);
        staged.push(...list);
        return;
      }
      if (list.length === 0) return;
      return this.record(tx, list).then((out) => void recorded.push(...out));
    });
    this.announce(recorded);
    this.publish(staged);
    return result;
  }

  /** Stamps events (id, source, time) and writes them to the durable log inside `tx`; announce them after its commit. */
  async record(tx: Transaction<Database>, inputs: readonly EventInput[]): Promise<BusEvent[]> {
    return appendEvents(tx, inputs.map((i) => this.#stamp(i)));
  }

  /** Stamps events (id, source, time) without recording them: for a writer that appends them to the log itself. */
  stamp(inputs: readonly EventInput[]): BusEvent[] {
    return inputs.map((i) => this.#stamp(i));
  }

  #stamp(input: EventInput): BusEvent {
    const decl = this.catalog.get(input.type);
    if (!decl) throw new Error(`event type ${input.type} is not declared in any manifest`);
    return { ...input, id: newId(), source: decl.source, time: nowTimestamp() };
  }

  // A durable type published without its transaction would never reach a webhook: refuse it loudly.
  #assertInProcess(type: string): void {
    const decl = this.catalog.get(type);
    if (decl && isDurable(decl)) {
      throw new Error(`event type ${type} is durable: record it in the transaction of its change (bus.record, or emit with tx)`);
    }
  }

  /**
   * Announces in-process-only events (`durable: false` types) in the given order. A durable type is
   * refused: it goes through `record` in its change's transaction, then `announce`.
   */
  publish(events: readonly EventInput[]): BusEvent[] {
    for (const e of events) this.#assertInProcess(e.type);
    const out = events.map((i) => this.#stamp(i));
    this.announce(out);
    return out;
  }

  /** Carries this bus's announcements to other replicas from now on. */
  bind(remote: RemoteBinding): void {
    this.#remote = remote;
  }

  /** Fans out events already stamped (and, when recorded, committed) to the subscribers, and to other replicas when bound. */
  announce(events: readonly BusEvent[]): void {
    // Inside an audited request whose change the store told of before its fsync (SQLite group
    // commit, store/sqlite/sqlite-store.ts): nobody hears of it before it is on disk.
    const unsynced = currentIntentScope()?.unsynced;
    if (unsynced !== undefined) {
      unsynced.then(
        () => this.#announceNow(events),
        () => undefined,
      );
      return;
    }
    this.#announceNow(events);
  }

  #announceNow(events: readonly BusEvent[]): void {
    this.announceRemote(events);
    if (this.#remote && events.length > 0) this.#remote.publish(events);
  }

  /** Fans out events to this replica's subscribers only (what another replica announced). */
  announceRemote(events: readonly BusEvent[]): void {
    for (const event of events) {
      this.#published++;
      for (const sub of this.#subs) {
        if (!sub.wants(event.type)) continue;
        if (sub.queue.length >= sub.limit) {
          sub.dropped++;
          this.#dropped?.inc({ subscriber: sub.opts.name });
          continue;
        }
        sub.queue.push(event);
        if (!sub.running) this.#drain(sub);
      }
    }
  }

  #drain(sub: Subscriber): void {
    sub.running = true;
    // Outside the announcing request's audit scope: what a subscriber writes is not that request's
    // change, and a marker it left would be recorded as a change without its audit record (issue 48).
    sub.idle = outsideIntentScope(async () => {
      // Yield first: the publisher's request finishes before any subscriber code runs.
      await new Promise<void>((r) => setImmediate(r));
      while (sub.queue.length > 0) {
        const event = sub.queue.shift() as BusEvent;
        try {
          await sub.handler(event);
          sub.delivered++;
        } catch (err) {
          sub.failed++;
          this.#log?.warn(
            { err, subscriber: sub.opts.name, event_type: event.type, event_id: event.id },
            'bus subscriber failed on an event',
          );
        }
      }
      sub.running = false;
    });
  }

  /** Resolves once every subscriber has handled what was queued (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = [...this.#subs].filter((s) => s.running || s.queue.length > 0);
      if (busy.length === 0) return;
      await Promise.all(busy.map((s) => s.idle));
    }
  }

  /** Which binding carries the bus (`/v1/console/bus`): in-process, or NATS and whether it is connected now. */
  binding(): { kind: 'in-process' | 'nats'; connected: boolean } {
    if (!this.#remote) return { kind: 'in-process', connected: true };
    const s = this.#remote.status();
    return { kind: s.kind, connected: s.connected };
  }

  /** The binding to other replicas for readiness (`/readyz`): undefined when the bus is in-process only. */
  remote(): { kind: 'nats'; connected: boolean; servers: string[] } | undefined {
    if (!this.#remote) return undefined;
    const s = this.#remote.status();
    return { kind: s.kind, connected: s.connected, servers: s.servers };
  }

  stats(): { published: number; subscribers: SubscriberStats[] } {
    return {
      published: this.#published,
      subscribers: [...this.#subs].map((s) => ({
        name: s.opts.name,
        types: s.opts.types,
        depth: s.queue.length,
        delivered: s.delivered,
        dropped: s.dropped,
        failed: s.failed,
      })),
    };
  }
}
