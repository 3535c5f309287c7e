/**
 * `olivares.api.v1.ControlPlane` (DECISIONS.md "gRPC"). Each call is turned into the equivalent
 * REST request and handled by the same `App`: setup gate, authenticator (bearer token, tenant
 * resolution, role, policy), validation, route handler and audit are the REST ones, so there is no
 * second implementation of any rule. Only the framing differs: proto messages in and out, and
 * HTTP statuses mapped to gRPC codes (status.ts).
 */
import type { Metadata, ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { App } from '../http/app.js';
import { serviceError } from './status.js';

/** What the gateway needs of the HTTP application. */
export type AppHandle = Pick<App, 'handle'>;

interface RestCall {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  tenant?: string;
  body?: unknown;
}

/** The caller's metadata as REST headers: only what the REST route reads. */
function headersOf(md: Metadata, tenant: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  const auth = md.get('authorization')[0];
  if (typeof auth === 'string') headers['authorization'] = auth;
  const rid = md.get('x-request-id')[0];
  if (typeof rid === 'string') headers['x-request-id'] = rid;
  // The request's `tenant` field is the REST X-Service-Tenant header; metadata may carry it too.
  const t = tenant || md.get('x-service-tenant')[0];
  if (typeof t === 'string' && t !== '') headers['x-service-tenant'] = t;
  return headers;
}

function queryString(q: RestCall['query']): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q ?? {}))
    if (v !== undefined && v !== '') parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.join('&');
}

/** Run one REST request through the app; resolves with the JSON answer or a gRPC error. */
async function forward<T>(
  app: AppHandle,
  call: ServerUnaryCall<unknown, unknown>,
  rest: RestCall,
): Promise<{ ok: true; value: T } | { ok: false; error: ReturnType<typeof serviceError> }> {
  const headers = headersOf(call.metadata, rest.tenant);
  let body = Buffer.alloc(0);
  if (rest.body !== undefined) {
    body = Buffer.from(JSON.stringify(rest.body));
    headers['content-type'] = 'application/json';
  }
  const onClientAbort = (cb: () => void) => {
    if (call.cancelled) cb();
    else call.once('cancelled', cb);
  };
  const res = await app.handle({
    method: rest.method,
    path: rest.path,
    query: queryString(rest.query),
    headers,
    body,
    remoteAddress: peerAddress(call.getPeer()),
    onClientAbort,
  });
  const text = typeof res.body === 'string' ? res.body : res.body ? Buffer.from(res.body).toString('utf8') : '';
  if (res.status >= 200 && res.status < 300) return { ok: true, value: JSON.parse(text) as T };
  let code = 'internal';
  let message = 'internal error';
  try {
    const env = JSON.parse(text) as { error?: { code?: string; message?: string } };
    code = env.error?.code ?? code;
    message = env.error?.message ?? message;
  } catch {
    // not an envelope: keep the generic answer
  }
  return { ok: false, error: serviceError(res.status, code, message) };
}

/** `ipv4:127.0.0.1:5000` / `ipv6:[::1]:5000` → the address part. */
export function peerAddress(peer: string): string {
  const m = /^(?:ipv4:|ipv6:)?\[?([^\]]*?)\]?:\d+$/.exec(peer);
  return m?.[1] ?? peer;
}

interface RestAgent {
  id: string;
  tenant_id: string;
  name: string;
  kind: string;
  external_id: string;
  status: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** The REST agent as the proto `Agent` (labels are not part of the gRPC shape). */
function agentMessage(a: RestAgent): Record<string, unknown> {
  return {
    id: a.id,
    tenant_id: a.tenant_id,
    name: a.name,
    kind: a.kind,
    external_id: a.external_id,
    status: a.status,
    version: a.version,
    created_at: a.created_at,
    updated_at: a.updated_at,
  };
}

function unary<Req, Res>(app: AppHandle, build: (req: Req) => RestCall, shape: (json: never) => Res) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    let rest: RestCall;
    try {
      rest = build(call.request);
    } catch (err) {
      callback(serviceError(400, 'bad_request', (err as Error).message) as never);
      return;
    }
    forward<never>(app, call as ServerUnaryCall<unknown, unknown>, rest).then(
      (r) => (r.ok ? callback(null, shape(r.value)) : callback(r.error as never)),
      () => callback(serviceError(500, 'internal', 'internal error') as never),
    );
  };
}

/** A path segment from a request field; refuses what could change the route. */
function segment(value: string, what: string): string {
  if (value === '') throw new Error(`${what} is required`);
  return encodeURIComponent(value);
}

interface TenantReq {
  tenant: string;
}

/** The ControlPlane implementation over an `App`. */
export function controlPlaneService(app: AppHandle): UntypedServiceImplementation {
  return {
    GetServerInfo: unary(
      app,
      () => ({ method: 'GET', path: '/v1/server-info' }),
      (j: { version: string; engine: { http: string }; setup_required: boolean }) => ({
        version: j.version,
        engine: j.engine.http,
        setup_required: j.setup_required,
      }),
    ),
    ListAgents: unary(
      app,
      (r: TenantReq & { limit: number; cursor: string }) => ({
        method: 'GET',
        path: '/v1/agents',
        tenant: r.tenant,
        query: { limit: r.limit === 0 ? undefined : r.limit, cursor: r.cursor },
      }),
      (j: { items: RestAgent[]; has_more: boolean; cursor?: string }) => ({
        agents: j.items.map(agentMessage),
        cursor: j.cursor ?? '',
        has_more: j.has_more,
      }),
    ),
    GetAgent: unary(
      app,
      (r: TenantReq & { id: string }) => ({ method: 'GET', path: `/v1/agents/${segment(r.id, 'id')}`, tenant: r.tenant }),
      agentMessage,
    ),
    CreateAgent: unary(
      app,
      (r: TenantReq & { name: string; kind: string; external_id: string; status: string }) => {
        // proto3 cannot tell "absent" from "": an empty optional field means "use the default".
        const body: Record<string, string> = { name: r.name };
        if (r.kind !== '') body['kind'] = r.kind;
        if (r.external_id !== '') body['external_id'] = r.external_id;
        if (r.status !== '') body['status'] = r.status;
        return { method: 'POST', path: '/v1/agents', tenant: r.tenant, body };
      },
      agentMessage,
    ),
    VerifyAudit: unary(
      app,
      (r: TenantReq & { from: number }) => ({
        method: 'GET',
        path: '/v1/audit/verify',
        tenant: r.tenant,
        query: { from: r.from === 0 ? undefined : r.from },
      }),
      (j: {
        ok: boolean;
        chain: { ok: boolean; checked: number };
        checkpoints: { ok: boolean; count: number; latest_attested_seq: number | null; status: string };
      }) => ({
        ok: j.ok,
        chain_ok: j.chain.ok,
        checked: j.chain.checked,
        checkpoints_ok: j.checkpoints.ok,
        checkpoint_count: j.checkpoints.count,
        latest_attested_seq: j.checkpoints.latest_attested_seq ?? 0,
        checkpoint_status: j.checkpoints.status,
      }),
    ),
  };
}
