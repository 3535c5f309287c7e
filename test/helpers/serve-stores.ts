/**
 * The real `svc serve` on each store backend of the test matrix: SQLite in a temporary data
 * directory, Postgres on a throwaway database (test/helpers/pg.ts). Tests that must hold on both
 * stores loop over {@link serveBackends}.
 */
import { createTempDatabase, pgTestDsn } from './pg.js';
import { selectedBackends } from './stores.js';
import { call, setupAndLogin, startServer, type StartOptions, type TestServer } from './server.js';
import type { StoreBackend } from '../../src/store/store.js';

export interface ServeBackend {
  backend: StoreBackend;
  /** why this backend does not run here, or undefined */
  skip: string | undefined;
  /** starts `svc serve` on a fresh store of this backend; `stop()` also drops the database */
  start(opts?: StartOptions): Promise<TestServer>;
}

/** The backends selected by `SVC_TEST_STORES` (all by default). */
export async function serveBackends(): Promise<ServeBackend[]> {
  const selected = selectedBackends();
  const pg = await pgTestDsn();
  const out: ServeBackend[] = [];
  if (selected.has('sqlite')) out.push({ backend: 'sqlite', skip: undefined, start: (opts = {}) => startServer(opts) });
  if (selected.has('postgres')) {
    out.push({
      backend: 'postgres',
      skip: pg.skip,
      start: async (opts = {}) => {
        if (pg.dsn === undefined) throw new Error(pg.skip);
        const db = await createTempDatabase(pg.dsn);
        try {
          const server = await startServer({ ...opts, args: ['--store', 'postgres', '--dsn', db.dsn, ...(opts.args ?? [])] });
          const stop = server.stop;
          server.stop = async (signal) => {
            try {
              return await stop(signal);
            } finally {
              await db.drop();
            }
          };
          return server;
        } catch (err) {
          await db.drop();
          throw err;
        }
      },
    });
  }
  return out;
}

/** A JSON client for one principal of a started server. */
export function client(server: TestServer, token: string, tenant?: string) {
  return (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(server, method, p, {
      headers: {
        authorization: `Bearer ${token}`,
        ...(tenant ? { 'x-service-tenant': tenant } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
}

export { setupAndLogin };

/** A JSON call as one principal; `raw` sends a body as given (malformed JSON and the like). */
export type Send = (token: string, method: string, p: string, body?: unknown, tenantId?: string, raw?: string) => ReturnType<typeof call>;

/** A module's HTTPS deployment: `svc serve` on one backend, tenant Acme with its owner (the superadmin), people, a second tenant. */
export interface ModuleDeployment {
  server: TestServer;
  tenant: string;
  otherTenant: string;
  /** session tokens: `owner`, then one per person asked for, by role name */
  tokens: Record<string, string>;
  /** `send(token, method, path, body?, tenant = Acme, raw?)` */
  send: Send;
  login(email: string, password: string): Promise<string>;
  stop(): Promise<void>;
}

export const MODULE_OWNER = { email: 'owner@example.test', password: 'owner password 123' };

/**
 * Starts the deployment the module HTTP tests share: setup (Acme, its owner), one user per entry of
 * `people` (name → role, password 'a long enough password', e-mail `<name>@example.test`) logged in,
 * and an organization `Other` for the wrong-tenant cases. Rate limits are off.
 */
export async function moduleDeployment(
  b: ServeBackend,
  people: Record<string, string> = {},
  opts: StartOptions = {},
): Promise<ModuleDeployment> {
  const server = await b.start({ timeoutMs: 120_000, ...opts, env: { SERVICE_RATE_LIMIT_RPS: '0', ...opts.env } });
  const { tenant, token: owner } = await setupAndLogin(server, MODULE_OWNER);
  const send: Send = (token, method, p, body, tenantId = tenant, raw) =>
    call(server, method, p, {
      headers: {
        authorization: `Bearer ${token}`,
        'x-service-tenant': tenantId,
        ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const login = async (email: string, password: string): Promise<string> => {
    const res = await call(server, 'POST', '/v1/auth/login', {
      body: JSON.stringify({ email, password }),
      headers: { 'content-type': 'application/json' },
    });
    if (res.status !== 200) throw new Error(`login ${email} answered ${res.status}: ${res.text}`);
    return res.json().token as string;
  };
  const tokens: Record<string, string> = { owner };
  for (const [name, role] of Object.entries(people)) {
    const email = `${name}@example.test`;
    const made = await send(owner, 'POST', '/v1/users', { email, password: 'a long enough password', role });
    if (made.status !== 201) throw new Error(`creating ${email} answered ${made.status}: ${made.text}`);
    tokens[name] = await login(email, 'a long enough password');
  }
  const other = await send(owner, 'POST', '/v1/system/orgs', { name: 'Other' });
  if (other.status !== 201) throw new Error(`creating the second tenant answered ${other.status}: ${other.text}`);
  return { server, tenant, otherTenant: other.json().id as string, tokens, send, login, stop: () => server.stop().then(() => undefined) };
}
