/**
 * An in-memory identity app over a real store (SQLite file or Postgres database): the identity
 * routes, the real authenticator, a RecordingAuditSink to assert the drafts, and helpers that
 * walk the real API (setup, login, token issue). No socket; `app.request()` as in test/http.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { App } from '../../src/http/app.js';
import { RecordingAuditSink } from '../../src/ledger/audit-sink.js';
import type { Services } from '../../src/serve/services.js';
import type { Store } from '../../src/store/store.js';
import { IdentityRuntime, type IdentityOptions } from '../../src/auth/runtime.js';
import { createAuthenticator } from '../../src/auth/authenticator.js';
import { identityRoutes } from '../helpers/identity-routes.js';
import { healthRoutes } from '../../src/core/health/routes.js';
import { startIdentity } from '../../src/core/setup/startup.js';
import type { AnyRoute } from '../../src/contract/route.js';
import { eventCatalog, recordHooks } from '../../src/routes.js';
import { EventBus } from '../../src/events/bus.js';

/** Cheap scrypt for functional tests; the brute-force and timing tests use the production cost. */
export const FAST_PASSWORDS = { log2N: 10, r: 8, p: 1 } as const;
export const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' } as const;

export interface Harness {
  app: App;
  runtime: IdentityRuntime;
  audit: RecordingAuditSink;
  store: Store;
  dataDir: string;
  /** what startIdentity printed on "stdout" */
  printed: string[];
  /** request with an optional bearer token and tenant */
  call(
    method: string,
    target: string,
    init?: { body?: unknown; token?: string; tenant?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Record<string, string>; json: () => any; text: string }>;
  dispose(): Promise<void>;
}

/** Build the app on `store`; setup state is read from it and a setup token minted if needed. */
export async function createHarness(
  store: Store,
  opts: Partial<IdentityOptions> & { routes?: AnyRoute[]; seedDemo?: boolean } = {},
): Promise<Harness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-identity-'));
  const routes = opts.routes ?? [...healthRoutes, ...identityRoutes];
  const runtime = new IdentityRuntime({ store, dataDir, routes, passwordParams: FAST_PASSWORDS, ...opts });
  const audit = new RecordingAuditSink();
  const log = pino({ level: 'silent' });
  const services = {
    store,
    audit,
    dataDir,
    log,
    identity: runtime,
    hooks: recordHooks(),
    // The real bus: identity changes (users, keys) write their events in their transactions.
    events: new EventBus({ catalog: eventCatalog(), log }),
    setupRequired: () => runtime.setupRequired(),
  } as unknown as Services;
  const printed: string[] = [];
  await startIdentity(runtime, { audit, seedDemo: opts.seedDemo ?? false, print: (t) => printed.push(t), log });
  const app = new App({
    routes,
    services,
    log,
    tls: true,
    bodyLimit: 64 * 1024,
    timeoutMs: 10_000,
    setupRequired: () => runtime.setupRequired(),
    authenticate: createAuthenticator(),
    validateResponses: true,
  });
  return {
    app,
    runtime,
    audit,
    store,
    dataDir,
    printed,
    call: (method, target, init = {}) => {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      if (init.token) headers['authorization'] = `Bearer ${init.token}`;
      if (init.tenant) headers['x-service-tenant'] = init.tenant;
      return app.request(method, target, { body: init.body, headers });
    },
    dispose: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/** The setup token printed by the last startIdentity. */
export function printedSetupToken(h: Harness): string {
  const m = /setup token: (svcst_[A-Z2-7]+)/.exec(h.printed.join(''));
  if (!m) throw new Error(`no setup token printed: ${JSON.stringify(h.printed)}`);
  return m[1] as string;
}

/** Redeem setup through the API and log in: the superadmin owner of the first organization. */
export async function bootstrap(h: Harness, organization = 'Org A'): Promise<{ session: string; userId: string; tenant: string }> {
  const res = await h.call('POST', '/v1/setup', { body: { token: printedSetupToken(h), ...ADMIN, organization } });
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${res.text}`);
  const created = res.json();
  const session = await login(h, ADMIN.email, ADMIN.password);
  return { session, userId: created.user.id, tenant: created.organization.id };
}

/** Log in and return the session token (throws on failure). */
export async function login(h: Harness, email: string, password: string): Promise<string> {
  const res = await h.call('POST', '/v1/auth/login', { body: { email, password } });
  if (res.status !== 200) throw new Error(`login ${email} failed: ${res.status} ${res.text}`);
  return res.json().token as string;
}

/** Create a tenant as the superadmin (POST /v1/system/orgs). */
export async function createOrg(h: Harness, session: string, name: string): Promise<string> {
  const res = await h.call('POST', '/v1/system/orgs', { token: session, body: { name } });
  if (res.status !== 201) throw new Error(`org create failed: ${res.status} ${res.text}`);
  return res.json().id as string;
}

/** Create a user with a role in `tenant` and return its session. */
export async function userWithRole(
  h: Harness,
  session: string,
  tenant: string,
  email: string,
  role: string,
): Promise<{ id: string; session: string }> {
  const password = 'a long enough password';
  const res = await h.call('POST', '/v1/users', { token: session, tenant, body: { email, password, role } });
  if (res.status !== 201) throw new Error(`user create failed: ${res.status} ${res.text}`);
  return { id: res.json().id as string, session: await login(h, email, password) };
}

/** Count rows of the identity tables (to prove a refused request created nothing). */
export async function identityCounts(store: Store): Promise<Record<string, number>> {
  return store.transaction(async (tx) => {
    const out: Record<string, number> = {};
    for (const table of ['users', 'memberships', 'sessions', 'api_tokens', 'tenants'] as const) {
      const row = await tx.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      out[table] = Number(row.n);
    }
    return out;
  });
}
