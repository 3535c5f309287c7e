/**
 * Shared helpers of the gRPC tests: a real `svc serve` (spawned, HTTPS + gRPC over TLS) set up
 * through its real API, tenant-bound API keys, and promise wrappers around grpc-js clients built
 * from the same .proto files the server loads.
 */
import assert from 'node:assert/strict';
import { Metadata, credentials, type ChannelCredentials, type Client, type ServiceError } from '@grpc/grpc-js';
import { call, startServer, type StartOptions, type TestServer } from '../helpers/server.js';
import { serviceClient } from '../../src/grpc/proto.js';

export const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

export interface Core {
  server: TestServer;
  /** superadmin session (owner of the first organization) */
  session: string;
  tenant: string;
  /** per tenant created by createOrg: a session of that tenant's owner (API keys need a membership) */
  owners: Record<string, string>;
  rest(
    method: string,
    path: string,
    init?: { body?: unknown; token?: string; tenant?: string },
  ): Promise<{ status: number; text: string; json: () => any }>;
}

/** Start `svc serve`, redeem setup and log in. */
export async function startCore(opts: StartOptions = {}): Promise<Core> {
  const server = await startServer({ ...opts, env: { SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0', ...(opts.env ?? {}) } });
  const rest: Core['rest'] = (method, path, init = {}) => {
    const headers: Record<string, string> = {};
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.token) headers['authorization'] = `Bearer ${init.token}`;
    if (init.tenant) headers['x-service-tenant'] = init.tenant;
    return call(server, method, path, { headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  };
  try {
    const setupToken = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0];
    assert.ok(setupToken, `no setup token on stdout: ${server.stdout()}`);
    const setup = await rest('POST', '/v1/setup', { body: { token: setupToken, ...ADMIN, organization: 'Org A' } });
    assert.equal(setup.status, 201, setup.text);
    const login = await rest('POST', '/v1/auth/login', { body: ADMIN });
    assert.equal(login.status, 200, login.text);
    return { server, session: login.json().token, tenant: setup.json().organization.id, owners: {}, rest };
  } catch (err) {
    await server.stop('SIGKILL');
    throw err;
  }
}

/** A second organization, created by the superadmin, with an owner user (its session in `core.owners`). */
export async function createOrg(core: Core, name: string): Promise<string> {
  const res = await core.rest('POST', '/v1/system/orgs', { token: core.session, body: { name } });
  assert.equal(res.status, 201, res.text);
  const id: string = res.json().id;
  const email = `owner-${id.slice(-8)}@example.test`;
  const password = 'a long enough password';
  const user = await core.rest('POST', '/v1/users', { token: core.session, tenant: id, body: { email, password, role: 'owner' } });
  assert.equal(user.status, 201, user.text);
  const login = await core.rest('POST', '/v1/auth/login', { body: { email, password } });
  assert.equal(login.status, 200, login.text);
  core.owners[id] = login.json().token;
  return id;
}

/** An API key bound to `tenant` with `role` (admin holds ingest:write). */
export async function issueToken(core: Core, tenant: string, role = 'admin', expiresAt?: string): Promise<string> {
  const res = await core.rest('POST', '/v1/tokens', {
    token: core.owners[tenant] ?? core.session,
    tenant,
    body: { name: `t-${role}-${Date.now()}`, role, tenant, ...(expiresAt ? { expires_at: expiresAt } : {}) },
  });
  assert.equal(res.status, 201, res.text);
  return res.json().token;
}

/** Register an agent over REST; returns its id. */
export async function createAgent(core: Core, tenant: string, name: string, externalId: string): Promise<string> {
  const res = await core.rest('POST', '/v1/agents', { token: core.session, tenant, body: { name, external_id: externalId } });
  assert.equal(res.status, 201, res.text);
  return res.json().id;
}

/** TLS credentials trusting the core's self-signed certificate, optionally with a client certificate. */
export function tlsCreds(core: Core, client?: { key: string; cert: string }): ChannelCredentials {
  const ca = Buffer.from(core.server.certPem as string);
  return client ? credentials.createSsl(ca, Buffer.from(client.key), Buffer.from(client.cert)) : credentials.createSsl(ca);
}

/** Metadata with a bearer token and, optionally, a tenant. */
export function bearer(token: string | undefined, tenant?: string): Metadata {
  const md = new Metadata();
  if (token) md.set('authorization', `Bearer ${token}`);
  if (tenant) md.set('x-service-tenant', tenant);
  return md;
}

type Unary = (req: unknown, md: Metadata, opts: { deadline: number }, cb: (err: ServiceError | null, res: any) => void) => void;

/** A ControlPlane client. */
export function controlPlane(core: Core, creds = tlsCreds(core)): Client & Record<string, Unary> {
  const C = serviceClient('ControlPlane');
  return new C(`127.0.0.1:${core.server.grpcPort}`, creds) as unknown as Client & Record<string, Unary>;
}

/** An Ingest client. */
export function ingestClient(core: Core, creds = tlsCreds(core), options: Record<string, unknown> = {}): Client & Record<string, any> {
  const C = serviceClient('Ingest');
  return new C(`127.0.0.1:${core.server.grpcPort}`, creds, options) as unknown as Client & Record<string, any>;
}

/** One unary call: resolves `{ok, value}` or `{ok: false, error}`; never rejects; 20 s deadline. */
export function unary(
  client: Record<string, Unary>,
  method: string,
  req: unknown,
  md = new Metadata(),
): Promise<{ ok: true; value: any } | { ok: false; error: ServiceError }> {
  return new Promise((resolve) => {
    (client[method] as Unary).call(client, req, md, { deadline: Date.now() + 20_000 }, (err, value) =>
      resolve(err ? { ok: false, error: err } : { ok: true, value }),
    );
  });
}

export interface PushResult {
  acks: any[];
  error?: ServiceError;
}

/** Open a Push stream, send `batches`, half-close, and collect the acks (or the stream's error). */
export function push(client: Record<string, any>, md: Metadata, batches: unknown[], timeoutMs = 30_000): Promise<PushResult> {
  return new Promise((resolve) => {
    const acks: any[] = [];
    const stream = client['Push'](md, { deadline: Date.now() + timeoutMs });
    stream.on('data', (a: unknown) => acks.push(a));
    stream.on('error', (error: ServiceError) => resolve({ acks, error }));
    stream.on('end', () => resolve({ acks }));
    for (const b of batches) stream.write(b);
    stream.end();
  });
}

/** An edge observation message with sensible defaults. */
export function edge(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    origin_kind: 'identity',
    origin_ref: 'svc-account-1',
    resource_ref: 's3://bucket/a',
    mode: 'r',
    confidence: 'high',
    signal_source: 'test',
    ...over,
  };
}
