/** The plain request object handlers see: no uWS types leak past src/http/uws-adapter.ts. */
import type { Logger } from 'pino';
import type { Services } from '../serve/services.js';
import type { Principal } from '../auth/principal.js';

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
}
