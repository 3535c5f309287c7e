/**
 * Pending SSO logins (issue 48 item 3) against a real OpenID provider: a flood of unauthenticated
 * starts from one client address is bounded to that address's own small pool (its oldest entries
 * go first, then refusals), a start from another address still succeeds, the refusals leave an
 * aggregated `auth.sso_start_refused` trace, and a pending login lives in the store: it completes
 * after the server restarts. SVC_TEST_SSO_STORE=postgres runs it with the server on Postgres.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { call, setupAndLogin, startServer, tempDir, type TestServer } from '../../helpers/server.js';
import { providerLogin, startProvider, type TestProvider } from '../../helpers/oidc-provider.js';
import { createTempDatabase, pgTestDsn, type TempDatabase } from '../../helpers/pg.js';

const onPostgres = process.env['SVC_TEST_SSO_STORE'] === 'postgres';
const REDIRECT = 'http://127.0.0.1:9/callback';
const FLOOD = 150;
let db: TempDatabase | undefined;
let server: TestServer;
let provider: TestProvider;
let session: string;
let tenant: string;
const dataDir = tempDir('svc-sso-pending-');
const serverArgs = () => (db ? { dataDir, args: ['--store', 'postgres', '--dsn', db.dsn] } : { dataDir });

before(async () => {
  if (onPostgres) {
    const target = await pgTestDsn();
    if (target.skip) throw new Error(target.skip);
    db = await createTempDatabase(target.dsn as string);
  }
  server = await startServer(serverArgs());
  ({ token: session, tenant } = await setupAndLogin(server, { email: 'root@example.test', password: 'correct horse battery staple' }));
  provider = await startProvider();
  provider.accounts.set('alice', { email: 'alice@example.test', email_verified: true, groups: ['ops'] });
  const headers = { authorization: `Bearer ${session}`, 'content-type': 'application/json' };
  await call(server, 'PUT', '/v1/console/secrets', { headers, body: JSON.stringify({ name: 'oidc', value: provider.clientSecret }) });
  const put = await call(server, 'PUT', '/v1/console/sso', {
    headers,
    body: JSON.stringify({
      issuer: provider.issuer,
      client_id: provider.clientId,
      client_secret_ref: 'secret:oidc',
      scopes: ['openid', 'email', 'groups'],
      role_mapping: [{ claim: 'groups', value: 'ops', tenant, role: 'viewer' }],
    }),
  });
  assert.equal(put.status, 200, put.text);
});
after(async () => {
  await server?.stop();
  await provider?.stop();
  await db?.drop();
});

/** A start from a chosen loopback source address (Linux routes all of 127/8 to lo). */
async function startFrom(agent: Agent | undefined): Promise<{ status: number; body: any }> {
  const res = await request(`${server.url}/v1/m/identity/sso/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uri: REDIRECT }),
    dispatcher: agent ?? server.dispatcher,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: JSON.parse(text) };
}

test('a flood of starts from one address is bounded and recorded; another address still starts', { timeout: 120_000 }, async () => {
  const flooder = new Agent({ connect: { ca: server.certPem }, localAddress: '127.0.0.2' });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < FLOOD; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => startFrom(flooder)));
      statuses.push(...batch.map((r) => r.status));
      for (const r of batch) if (r.status !== 200) assert.equal(r.body.error.code, 'rate_limited', JSON.stringify(r.body));
    }
    const admitted = statuses.filter((s) => s === 200).length;
    assert.ok(admitted >= 5 && admitted <= 20, `admitted ${admitted} of ${FLOOD} from one address`);
    const other = await startFrom(undefined);
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const items = (
      await call(server, 'GET', '/v1/audit/system?limit=1000', { headers: { authorization: `Bearer ${session}` } })
    ).json().items as Array<{ action: string; meta?: string }>;
    const refused = items.filter((a) => a.action === 'auth.sso_start_refused').map((a) => JSON.parse(a.meta ?? '{}'));
    const mine = refused.filter((m) => m.ip === '127.0.0.2' && m.reason === 'rate_limited');
    assert.ok(mine.length >= 1, JSON.stringify(refused));
    // Aggregated: a handful of records for the whole flood, each counting the refusals it stands for.
    assert.ok(mine.length <= 3, `${mine.length} records for one flood`);
    assert.ok(mine[0].refused >= 1);
  } finally {
    await flooder.close();
  }
});

test('a pending login is kept in the store: it completes after the server restarts', { timeout: 60_000 }, async () => {
  const started = await startFrom(undefined);
  assert.equal(started.status, 200);
  const cb = await providerLogin(started.body.authorization_url, 'alice', REDIRECT);
  await server.stop();
  server = await startServer(serverArgs());
  const done = await call(server, 'POST', '/v1/m/identity/sso/complete', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ state: cb.get('state'), code: cb.get('code'), iss: cb.get('iss') ?? undefined }),
  });
  assert.equal(done.status, 200, done.text);
  assert.match(done.json().token, /^svcs_/);
  const again = await call(server, 'POST', '/v1/m/identity/sso/complete', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ state: cb.get('state'), code: cb.get('code') }),
  });
  assert.equal(again.status, 401);
});
