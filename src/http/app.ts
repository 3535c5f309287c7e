/**
 * The transport-free HTTP core: route lookup, setup gate, authentication seam, validation,
 * handler deadline, the error envelope and security headers. `uws-adapter.ts` feeds it real
 * sockets; tests call `app.request()` with no socket at all (STYLE.md rule 2).
 */
import { randomUUID } from 'node:crypto';
import Value from 'typebox/value';
import type { Logger } from 'pino';
import { ApiError, errors } from '../contract/errors.js';
import type { CompiledRoute } from '../contract/registry.js';
import { compileRoutes } from '../contract/registry.js';
import type { AnyRoute } from '../contract/route.js';
import { PUBLIC } from '../contract/route.js';
import type { Services } from '../serve/services.js';
import type { RequestContext } from './context.js';
import { isReply, type Reply } from './reply.js';
import { Router } from './router.js';
import { parseQuery } from './query.js';
import { securityHeaders } from './headers.js';
import { appendAudit } from './request-scope.js';

/** A request as the adapter hands it over: body already read and size-checked. */
export interface HttpRequest {
  method: string;
  path: string;
  /** raw query string without `?` */
  query: string;
  headers: Record<string, string>;
  body: Buffer;
  remoteAddress: string;
  /** the adapter calls `cb` once if the client disconnects before the answer is complete */
  onClientAbort?: (cb: () => void) => void;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  stream?: AsyncIterable<Uint8Array | string>;
  /** the route template, or `unmatched` (bounded metrics label) */
  route: string;
  requestId: string;
}

/** Decides whether setup is still pending (DECISIONS.md setup gate). */
export type SetupGate = () => boolean;

/** The authentication seam: resolves the caller or throws 401/403 ApiErrors. Identity plugs in here. */
export type Authenticator = (ctx: RequestContext, route: CompiledRoute) => Promise<void>;

export interface AppOptions {
  routes: readonly AnyRoute[];
  services: Services;
  log: Logger;
  tls: boolean;
  /** default body limit in bytes */
  bodyLimit: number;
  /** default handler deadline in ms */
  timeoutMs: number;
  setupRequired?: SetupGate;
  /**
   * Asked only while the cached gate says "pending": re-reads the store, so a request that reaches
   * this replica right after setup completed on another replica is not refused (docs/scale-out.md).
   */
  setupStillRequired?: () => Promise<boolean>;
  authenticate?: Authenticator;
  /** check every JSON answer against the route's response schema (tests, development) */
  validateResponses?: boolean;
  /**
   * Runs the handler of every mutating request (POST, PUT, PATCH, DELETE) whose route declares an
   * `audit` action, after authentication;
   * `svc serve` plugs in the audit intent scope (serve/audit-scope.ts), so a committed change never
   * goes without its ledger record.
   */
  aroundMutation?: (ctx: RequestContext, handler: () => unknown) => unknown;
}

/** What the adapter needs to know before it reads a body. */
export interface Prepared {
  route?: CompiledRoute;
  params: Record<string, string>;
  bodyLimit: number;
  timeoutMs: number;
  /** an answer decided before the body is read (404, 405) */
  early?: ApiError & { allow?: string[] };
}

/** Methods whose handlers change state. */
const MUTATING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** An incoming X-Request-ID is echoed only when it is this tame; otherwise a fresh one is made. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// Invalid UTF-8 is refused rather than silently replaced with U+FFFD (RFC 8259 §8.1).
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const LONE_SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const JSON_TYPE = /^application\/(?:[a-z0-9.+-]*\+)?json\s*(?:;|$)/i;

/** The HTTP application: one instance per server. */
export class App {
  readonly routes: CompiledRoute[];
  private readonly router = new Router<CompiledRoute>();
  private readonly opts: AppOptions;

  constructor(opts: AppOptions) {
    this.opts = opts;
    this.routes = compileRoutes(opts.routes);
    for (const r of this.routes) this.router.add(r.spec.method, r.spec.path, r);
  }

  /** Every method and path template the router answers (the route-coverage test walks this). */
  served(): Array<{ method: string; path: string; route: CompiledRoute }> {
    return [...this.router.entries()].map((e) => ({ method: e.method, path: e.template, route: e.value }));
  }

  /** Route lookup, done before the body is read so limits apply per route. */
  prepare(method: string, path: string): Prepared {
    const found = this.router.find(method, path);
    if (found.kind === 'found') {
      const route = found.match.value;
      return {
        route,
        params: found.match.params,
        bodyLimit: route.spec.bodyLimit ?? this.opts.bodyLimit,
        timeoutMs: route.spec.timeoutMs ?? this.opts.timeoutMs,
      };
    }
    const base = { params: {}, bodyLimit: this.opts.bodyLimit, timeoutMs: this.opts.timeoutMs };
    if (found.kind === 'method_not_allowed') {
      const err = new ApiError('method_not_allowed', `method ${method} not allowed; allowed: ${found.allow.join(', ')}`) as ApiError & {
        allow?: string[];
      };
      err.allow = found.allow;
      return { ...base, early: err };
    }
    return { ...base, early: errors.notFound(`route ${method} ${path}`) };
  }

  /** Handle one request end to end; never throws. */
  async handle(req: HttpRequest, prepared = this.prepare(req.method, req.path)): Promise<HttpResponse> {
    const incomingId = req.headers['x-request-id'];
    const requestId = incomingId && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
    const routeLabel = prepared.route?.spec.path ?? 'unmatched';
    const base = securityHeaders(this.opts.tls);
    base['x-request-id'] = requestId;
    try {
      if (prepared.early) {
        const extra: Record<string, string> = prepared.early.allow ? { allow: prepared.early.allow.join(', ') } : {};
        return this.errorResponse(prepared.early, { ...base, ...extra }, routeLabel, requestId);
      }
      const route = prepared.route as CompiledRoute;
      const result = await this.run(route, prepared, req, requestId);
      return this.successResponse(route, result.value, Object.assign(base, result.headers), requestId, req.method === 'HEAD');
    } catch (err) {
      const apiErr = err instanceof ApiError ? err : this.unexpected(err, req, requestId);
      return this.errorResponse(apiErr, { ...base, ...apiErr.headers }, routeLabel, requestId);
    }
  }

  /** In-memory request for tests: no socket, streams collected. */
  async request(
    method: string,
    target: string,
    init: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; headers: Record<string, string>; text: string; json: () => unknown }> {
    const q = target.indexOf('?');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
    let body: Buffer = Buffer.alloc(0);
    if (init.body !== undefined) {
      body = Buffer.isBuffer(init.body) ? init.body : Buffer.from(typeof init.body === 'string' ? init.body : JSON.stringify(init.body));
      headers['content-type'] ??= 'application/json';
    }
    const res = await this.handle({
      method,
      path: q < 0 ? target : target.slice(0, q),
      query: q < 0 ? '' : target.slice(q + 1),
      headers,
      body,
      remoteAddress: '127.0.0.1',
    });
    let text = typeof res.body === 'string' ? res.body : res.body ? Buffer.from(res.body).toString('utf8') : '';
    if (res.stream) for await (const chunk of res.stream) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
  }

  private async run(
    route: CompiledRoute,
    prepared: Prepared,
    req: HttpRequest,
    requestId: string,
  ): Promise<{ value: unknown; headers: Record<string, string> }> {
    const spec = route.spec;
    if (
      !spec.setupExempt &&
      this.opts.setupRequired?.() &&
      (this.opts.setupStillRequired === undefined || (await this.opts.setupStillRequired()))
    )
      throw new ApiError('setup_required');
    // The AbortSignal is made only if a handler asks for it: most never do, and two controllers
    // per request showed up in profiles. An abort before that is replayed onto the new signal.
    let controller: AbortController | undefined;
    let abortReason: unknown;
    const abort = (reason: unknown) => {
      if (abortReason !== undefined) return;
      abortReason = reason;
      controller?.abort(reason);
    };
    req.onClientAbort?.(() => abort(new ApiError('request_timeout', 'client went away')));
    const responseHeaders: Record<string, string> = {};
    const baseLog = this.opts.log;
    let childLog: Logger | undefined;
    // ctx.audit calls (and ctx.unchanged): a mutation declaring an action must record it (checked below).
    let recorded = 0;
    const ctx: RequestContext = {
      method: req.method,
      path: req.path,
      route: spec.path,
      params: prepared.params,
      query: {},
      body: undefined,
      headers: req.headers,
      requestId,
      remoteAddress: req.remoteAddress,
      get signal() {
        if (!controller) {
          controller = new AbortController();
          if (abortReason !== undefined) controller.abort(abortReason);
        }
        return controller.signal;
      },
      // A pino child per request costs more than most handlers: made on first use only.
      get log() {
        return (childLog ??= baseLog.child({ request_id: requestId }));
      },
      services: this.opts.services,
      responseHeaders,
      audit: (target, meta, opts) => {
        recorded++;
        return appendAudit(ctx, route, target, meta, opts);
      },
      unchanged: () => {
        recorded++;
      },
    };
    const mutable = ctx as { params: unknown; query: unknown; body: unknown };
    // Path parameters are part of the route match, checked before authentication: the authenticator
    // hands the id to the policy decision point and records privileged reads with it, so it must
    // never see one its schema refuses (a NUL in an id made PostgreSQL answer 500).
    // A route may record its own input refusals (SSO: every refusal on an authentication path is audited).
    // Synchronous on the way through; only a refusal waits for the route's record of it.
    const refused = async (err: unknown): Promise<never> => {
      if (spec.onInputRefused !== undefined && err instanceof ApiError) await spec.onInputRefused(ctx, err);
      throw err;
    };
    try {
      mutable.params = validatePart(route, 'params', prepared.params);
    } catch (err) {
      await refused(err);
    }
    if (spec.permission !== PUBLIC) {
      if (!this.opts.authenticate) throw errors.unauthenticated();
      await this.opts.authenticate(ctx, route);
    }
    try {
      mutable.query = parseAndValidateQuery(route, req.query);
      mutable.body = parseAndValidateBody(route, req);
    } catch (err) {
      await refused(err);
    }
    const around = this.opts.aroundMutation;
    // Mutations that promise a ledger record (their `audit` action); the `unaudited` ones (ephemeral
    // WebAuthn challenges, read-only POSTs) run bare.
    const result =
      around !== undefined && route.auditActions.length > 0 && MUTATING.has(spec.method)
        ? around(ctx, () => spec.handler(ctx as never))
        : spec.handler(ctx as never);
    const mustRecord = route.auditActions.length > 0 && MUTATING.has(spec.method);
    // A synchronous answer needs no deadline timer.
    if (!isThenable(result)) {
      if (mustRecord && recorded === 0) unrecorded(route, result);
      return { value: result, headers: responseHeaders };
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new ApiError('unavailable', `request timed out after ${prepared.timeoutMs} ms`);
        abort(err);
        reject(err);
      }, prepared.timeoutMs);
    });
    try {
      const value = await Promise.race([result, deadline]);
      if (mustRecord && recorded === 0) unrecorded(route, value);
      return { value, headers: responseHeaders };
    } finally {
      clearTimeout(timer);
    }
  }

  private successResponse(
    route: CompiledRoute,
    value: unknown,
    headers: Record<string, string>,
    requestId: string,
    head: boolean,
  ): HttpResponse {
    const r: Reply | undefined = isReply(value) ? value : undefined;
    const status = r?.status ?? route.spec.status ?? 200;
    const out: HttpResponse = { status, headers: r ? Object.assign(headers, r.headers) : headers, route: route.spec.path, requestId };
    const body = r ? r.body : { kind: 'json' as const, value };
    if (body.kind === 'json') {
      if (this.opts.validateResponses && route.response && !route.response.check(body.value)) {
        throw new Error(`response of ${route.spec.method} ${route.spec.path} violates its schema: ${route.response.explain(body.value)}`);
      }
      out.headers['content-type'] = r?.contentType ?? 'application/json';
      out.body = head ? '' : JSON.stringify(body.value);
    } else if (body.kind === 'bytes') {
      out.headers['content-type'] = r?.contentType ?? 'application/octet-stream';
      out.body = head ? '' : body.value;
    } else if (body.kind === 'stream') {
      out.headers['content-type'] = r?.contentType ?? 'application/octet-stream';
      if (!head) out.stream = body.value;
    }
    return out;
  }

  private errorResponse(err: ApiError, headers: Record<string, string>, route: string, requestId: string): HttpResponse {
    return {
      status: err.status,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(err.toEnvelope()),
      route,
      requestId,
    };
  }

  private unexpected(err: unknown, req: HttpRequest, requestId: string): ApiError {
    // The detail goes to the log only; the client sees the generic "internal error".
    this.opts.log.error({ err, request_id: requestId, method: req.method, path: req.path }, 'unhandled error');
    return errors.internal();
  }
}

/**
 * A mutation that declares an audit action answered with success but recorded nothing: a programming
 * error (the route's promise of a ledger record is broken), answered 500 like a failed append.
 */
function unrecorded(route: CompiledRoute, value: unknown): void {
  if (isReply(value) && value.status >= 300) return;
  throw new Error(
    `route ${route.spec.method} ${route.spec.path} declares the audit action ${route.auditActions[0]} but its handler recorded ` +
      'nothing (call ctx.audit, or ctx.unchanged() when nothing changed)',
  );
}

/** True for promises and other thenables. */
function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

function validatePart(route: CompiledRoute, part: 'params', value: Record<string, string>): unknown {
  const checker = route[part];
  if (!checker) return value;
  const coerced = Value.Convert(checker.schema, { ...value });
  if (!checker.check(coerced)) throw errors.badRequest(`invalid path parameter: ${checker.explain(coerced)}`);
  return checker.canonical ? checker.canonical(coerced) : coerced;
}

function parseAndValidateQuery(route: CompiledRoute, raw: string): unknown {
  const parsed = parseQuery(raw);
  const checker = route.query;
  if (!checker) {
    const keys = Object.keys(parsed);
    if (keys.length > 0) throw errors.badRequest(`unknown query parameter: ${keys.join(', ')}`);
    return {};
  }
  // A parameter given twice where the schema takes one value: say so, rather than "must be integer".
  const props = (checker.schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const repeated = Object.keys(parsed).filter((k) => Array.isArray(parsed[k]) && props[k] !== undefined && props[k]?.type !== 'array');
  if (repeated.length > 0) throw errors.badRequest(`query parameter given more than once: ${repeated.join(', ')}`);
  // Only string parts of a request are coerced; a JSON body never is (STYLE.md rule 1).
  const coerced = Value.Convert(checker.schema, parsed);
  if (!checker.check(coerced)) throw errors.badRequest(`invalid query: ${checker.explain(coerced)}`);
  return checker.canonical ? checker.canonical(coerced) : coerced;
}

function parseAndValidateBody(route: CompiledRoute, req: HttpRequest): unknown {
  const checker = route.body;
  if (!checker) {
    if (req.body.length > 0) throw errors.badRequest('this route takes no request body');
    return undefined;
  }
  if (req.body.length === 0) throw errors.badRequest('request body required');
  const type = req.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(type))
    throw new ApiError('unsupported_media_type', `request body must be application/json, got ${JSON.stringify(type.slice(0, 100))}`);
  let value: unknown;
  let text: string;
  try {
    text = UTF8.decode(req.body);
    value = JSON.parse(text);
  } catch (err) {
    throw errors.badRequest(err instanceof SyntaxError ? `malformed JSON: ${err.message}` : 'request body is not valid UTF-8');
  }
  // JSON may escape a lone surrogate (`"\ud800"`), which is no Unicode text: the ledger's
  // canonical JSON (RFC 8785) cannot hash it, nor can most SIEMs read it. Only an escape makes one
  // (the bytes were strict UTF-8), so the walk runs only when the text has such an escape.
  if (LONE_SURROGATE_ESCAPE.test(text)) {
    const where = illFormedAt(value, '');
    if (where !== undefined)
      throw errors.badRequest(`invalid body: ${where === '' ? '(root)' : where} holds a lone UTF-16 surrogate (not Unicode text)`);
  }
  if (!checker.check(value)) throw errors.badRequest(`invalid body: ${checker.explain(value)}`);
  // Canonical UUIDs (canonical.ts) are not coercion: the value already passed as sent.
  return checker.canonical ? checker.canonical(value) : value;
}

/** JSON pointer of the first string (key or value) in `v` that is not well-formed UTF-16, if any. */
function illFormedAt(v: unknown, at: string): string | undefined {
  if (typeof v === 'string') return LONE_SURROGATE.test(v) ? at : undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const w = illFormedAt(v[i], `${at}/${i}`);
      if (w !== undefined) return w;
    }
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      const here = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (LONE_SURROGATE.test(k)) return here;
      const w = illFormedAt(x, here);
      if (w !== undefined) return w;
    }
  }
  return undefined;
}
