/**
 * A route is declared once (ARCHITECTURE.md "A route is declared once"): method, path, schemas,
 * permission, stability, audit action and handler. The router, request validation, OpenAPI
 * documents, the permission catalog and the audit of privileged reads all read this declaration.
 */
import { boundIntegers } from './integer-bounds.js';
import type { TSchema, Static } from 'typebox';
import type { RequestContext } from '../http/context.js';
import type { Reply } from '../http/reply.js';
import type { ApiError } from './errors.js';

/** Why a served route is in neither OpenAPI document (RouteSpec.unlisted). */
export type Unlisted = 'protocol' | 'ui-asset';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Stability = 'stable' | 'beta';

/** The permission of a route anyone may call (health, setup, contract documents). */
export const PUBLIC = 'public' as const;

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;

export interface RouteSpec<
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
  R extends TSchema | undefined = TSchema | undefined,
> {
  method: HttpMethod;
  /** OpenAPI-style template: `/v1/agents/{id}` */
  path: string;
  stability: Stability;
  operationId: string;
  summary: string;
  tags?: string[];
  /** `<resource>:<verb>`, `<ns>:<resource>:<verb>`, or PUBLIC. Deny by default: there is no "none". */
  permission: string;
  /** A privileged read (DECISIONS.md: editor and above, each one audited). */
  privileged?: boolean;
  /**
   * The ledger action this route records, written once, here: the handler's `ctx.audit` takes it from
   * the declaration, a privileged read is recorded by the authenticator. A list when the handler records
   * one of several (outcome-dependent: login success or failure), the first being the route's own
   * (OpenAPI `x-audit-action`). Every mutation declares one or `unaudited` (docs/modules.md "Audit").
   */
  audit?: string | readonly [string, ...string[]];
  /**
   * `system`: identity events (DECISIONS.md "Audit ledger", docs/auth.md): recorded on the system chain
   * (or the chain `ctx.audit` names), meta as given. Otherwise on the request tenant's chain, with the
   * request id and trace in meta.
   */
  auditChain?: 'system';
  /**
   * An authentication path: called when the request is refused before its handler runs (params,
   * query or body that do not parse or match the schema), with the 4xx it gets, so the route records
   * that refusal too (issue 48: every refusal on an authentication path leaves an audit record).
   */
  onInputRefused?: (ctx: RequestContext, err: ApiError) => Promise<void>;
  /** A mutation that appends no ledger record, and why (read-only POST, ephemeral challenge, protocol step). */
  unaudited?: string;
  /**
   * Served but left out of both OpenAPI documents, and why (issue 30 item 10). Every other route is
   * in `/openapi.json` (stable) or `/openapi.beta.json` (beta); test/http/route-coverage.test.ts
   * walks the router to hold that.
   * - `protocol`: an endpoint whose shape another standard fixes, not this contract
   *   (`/openapi.beta.json`: an OpenAPI document, and not one of the 53 core paths).
   * - `ui-asset`: a page or file for a browser (`/ui/step-up`).
   */
  unlisted?: Unlisted;
  /** Still answered while setup is pending (DECISIONS.md setup gate). */
  setupExempt?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  response?: R;
  /** Status of a successful answer (default 200). */
  status?: number;
  /** Content type of a successful answer when it is not JSON. */
  produces?: string;
  /** Largest accepted body in bytes (default: the server's limit). */
  bodyLimit?: number;
  /** Handler deadline in ms; the context's signal aborts then (default: the server's). */
  timeoutMs?: number;
  handler: (
    ctx: RequestContext<StaticOr<P, Record<string, string>>, StaticOr<Q, Record<string, unknown>>, StaticOr<B, undefined>>,
  ) => Promise<Reply | StaticOr<R, unknown>> | Reply | StaticOr<R, unknown>;
}

/** Any declared route, with its type parameters erased. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any, any>;

/** Declare a route; identity at runtime, inference at compile time. */
export function route<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  R extends TSchema | undefined = undefined,
>(spec: RouteSpec<P, Q, B, R>): RouteSpec<P, Q, B, R> {
  // Bounded at declaration too (compileRoutes does it again), so the OpenAPI documents show the bounds whatever is built first.
  for (const part of [spec.params, spec.query, spec.body]) if (part !== undefined) boundIntegers(part);
  return spec;
}
