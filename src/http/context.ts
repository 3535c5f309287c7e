/** The plain request object handlers see: no uWS types leak past src/http/uws-adapter.ts. */
import type { Logger } from 'pino';
import type { Services } from '../serve/services.js';
import type { Principal } from '../auth/principal.js';
import type { AuditRecord } from '../ledger/record.js';
import type { BusEvent } from '../events/event-types.js';

/** What a ledger record is about: `target_kind` and `target_id` (`""` when the action has no target). */
export interface AuditTarget {
  kind: string;
  id: string;
}

/** How one `ctx.audit` call departs from its route's declaration (RouteSpec.audit, docs/modules.md). */
export interface AuditOptions {
  /** which of the route's declared actions this record is (default: the first); an undeclared one is a programming error */
  action?: string;
  /** the chain the record goes to when it is not the route's (a system route acting on one tenant: that tenant's chain) */
  chain?: string;
  /** the acting user when no principal is authenticated yet (login, setup): `user:<id>`, or `anonymous` when undefined */
  as?: { user: string | undefined };
  /** bus events (stamped) written to the event log in the record's commit */
  events?: BusEvent[];
}

export interface RequestContext<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  readonly method: string;
  /** the request path, decoded per segment */
  readonly path: string;
  /** the matched route template (`/v1/agents/{id}`), also the metrics label */
  readonly route: string;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** request headers, names lower-cased */
  readonly headers: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly remoteAddress: string;
  /** aborted when the client goes away or the route's deadline passes */
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly services: Services;
  /** response headers a handler or middleware adds to a successful answer */
  readonly responseHeaders: Record<string, string>;
  /** the authenticated caller; set by the authenticator on every non-public route (src/auth) */
  readonly principal?: Principal;
  /** the tenant the request acts in, resolved per DECISIONS.md "Tenant resolution" (tenant-scoped routes) */
  readonly tenant?: string;
  /**
   * Appends the ledger record of an action the route declares (RouteSpec.audit), with the caller as actor;
   * resolves once durable. The one request-side way to write the ledger (docs/modules.md "Audit").
   */
  readonly audit: (target: AuditTarget, meta?: Record<string, unknown>, opts?: AuditOptions) => Promise<AuditRecord>;
  /** A successful mutation that changed nothing, so records nothing (else the router refuses the answer). */
  readonly unchanged: () => void;
}
