/**
 * Who an SSO login signs in as, against a real OpenID provider (oidc-provider on loopback, its login
 * and consent pages driven over HTTP): e-mails compared on their exact code points with ASCII-only
 * case folding (a Kelvin-sign address is not `kim@…`), an existing account linked only when the
 * setting allows it and the provider verified the address, a second subject for a linked account
 * refused with 409 `sso_identity_conflict` (both subjects in the ledger) until an admin relinks it,
 * and the same normalisation for local accounts (creation, password login).
 * SVC_TEST_SSO_STORE=postgres runs it with the server on Postgres.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, setupAndLogin, startServer, type TestServer } from '../../helpers/server.js';
import { providerLogin, startProvider, type TestProvider } from '../../helpers/oidc-provider.js';
import { createTempDatabase, pgTestDsn, type TempDatabase } from '../../helpers/pg.js';

const onPostgres = process.env['SVC_TEST_SSO_STORE'] === 'postgres';
const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };
const KIM_PASSWORD = 'kim has a long password 42';
const REDIRECT = 'http://127.0.0.1:9/callback';
let db: TempDatabase | undefined;
let server: TestServer;
let provider: TestProvider;
let session: string;
let tenant: string;
let kimId: string;
let ssoBody: Record<string, unknown>;

const as = (body?: unknown) => ({
  headers: {
    authorization: `Bearer ${session}`,
    'x-service-tenant': tenant,
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
  },
  ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
});
const post = (p: string, body: unknown) =>
  call(server, 'POST', p, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

before(async () => {
  if (onPostgres) {
    const target = await pgTestDsn();
    if (target.skip) throw new Error(target.skip);
    db = await createTempDatabase(target.dsn as string);
  }
  server = await startServer(db ? { args: ['--store', 'postgres', '--dsn', db.dsn] } : {});
  ({ token: session, tenant } = await setupAndLogin(server, ADMIN));
  provider = await startProvider();
  const kim = await call(server, 'POST', '/v1/users', as({ email: 'kim@example.test', password: KIM_PASSWORD, role: 'owner' }));
  assert.equal(kim.status, 201, kim.text);
  kimId = kim.json().id;
  assert.equal((await call(server, 'PUT', '/v1/console/secrets', as({ name: 'oidc', value: provider.clientSecret }))).status, 200);
  ssoBody = {
    issuer: provider.issuer,
    client_id: provider.clientId,
    client_secret_ref: 'secret:oidc',
    scopes: ['openid', 'email', 'groups'],
    role_mapping: [{ claim: 'groups', value: 'svc-editors', tenant, role: 'editor' }],
    allowed_domains: ['example.test'],
  };
  const put = await call(server, 'PUT', '/v1/console/sso', as(ssoBody));
  assert.equal(put.status, 200, put.text);
});
after(async () => {
  await server?.stop();
  await provider?.stop();
  await db?.drop();
});

/** A whole login as the provider account `login`: start, the provider's pages, complete. */
async function ssoLogin(login: string): Promise<{ status: number; json: () => any; text: string }> {
  const started = await post('/v1/m/identity/sso/start', { redirect_uri: REDIRECT });
  assert.equal(started.status, 200, started.text);
  const cb = await providerLogin(started.json().authorization_url, login, REDIRECT);
  assert.ok(cb.get('code'), `no code: ${cb.toString()}`);
  return post('/v1/m/identity/sso/complete', { state: cb.get('state'), code: cb.get('code'), iss: cb.get('iss') ?? undefined });
}

async function failures(): Promise<Array<Record<string, unknown>>> {
  const items = (await call(server, 'GET', '/v1/audit/system?limit=1000', as())).json().items as Array<{ action: string; meta?: string }>;
  return items.filter((a) => a.action === 'auth.sso_login_failed').map((a) => JSON.parse(a.meta ?? '{}'));
}

test('a Kelvin-sign address (U+212A) is not kim@…: a separate account, never the owner', async () => {
  provider.accounts.set('kelvin', { email: '\u212Aim@example.test', email_verified: true, groups: ['svc-editors'] });
  const res = await ssoLogin('kelvin');
  assert.equal(res.status, 200, res.text);
  assert.notEqual(res.json().user_id, kimId);
  assert.equal(res.json().email, '\u212Aim@example.test');
  assert.equal(res.json().provisioned, true);
});

test('an existing account is linked only when the setting allows it and the provider verified the address', async () => {
  provider.accounts.set('kim-a', { email: 'KIM@Example.Test', email_verified: true });
  const off = await ssoLogin('kim-a');
  assert.equal(off.status, 401, off.text);
  assert.ok((await failures()).some((m) => m['reason'] === 'link_not_allowed' && m['email'] === 'kim@example.test'));
  const put = await call(server, 'PUT', '/v1/console/sso', as({ ...ssoBody, link_existing_accounts: true }));
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json().settings.link_existing_accounts, true);
  provider.accounts.set('kim-unverified', { email: 'kim@example.test', email_verified: false });
  const unverified = await ssoLogin('kim-unverified');
  assert.equal(unverified.status, 401, unverified.text);
  const linked = await ssoLogin('kim-a');
  assert.equal(linked.status, 200, linked.text);
  assert.deepEqual([linked.json().user_id, linked.json().provisioned], [kimId, false]);
});

test('a second subject for a linked account: 409 sso_identity_conflict with both subjects recorded; an admin relinks', async () => {
  provider.accounts.set('kim-b', { email: 'kim@example.test', email_verified: true });
  const res = await ssoLogin('kim-b');
  assert.equal(res.status, 409, res.text);
  assert.equal(res.json().error.code, 'sso_identity_conflict');
  const rec = (await failures()).find((m) => m['reason'] === 'sso_identity_conflict');
  assert.ok(rec, 'no auth.sso_login_failed record for the conflict');
  assert.deepEqual([rec['subject'], rec['linked_subject'], rec['user_id']], ['kim-b', 'kim-a', kimId]);
  const relink = await call(server, 'PUT', `/v1/m/identity/sso/identities/${kimId}`, as({ subject: 'kim-b' }));
  assert.equal(relink.status, 200, relink.text);
  assert.deepEqual([relink.json().subject, relink.json().issuer], ['kim-b', provider.issuer]);
  const now = await ssoLogin('kim-b');
  assert.equal(now.status, 200, now.text);
  assert.equal(now.json().user_id, kimId);
  assert.equal((await ssoLogin('kim-a')).status, 409);
  const items = (await call(server, 'GET', '/v1/audit/system?limit=1000', as())).json().items as Array<{ action: string; meta?: string }>;
  const relinked = items.find((a) => a.action === 'sso.relink');
  assert.ok(relinked);
  assert.deepEqual(
    [JSON.parse(relinked.meta ?? '{}').subject, JSON.parse(relinked.meta ?? '{}').previous_subject],
    ['kim-b', 'kim-a'],
  );
  // Unlinking: the account signs in by password again, and its next SSO login links by the rule.
  assert.equal((await call(server, 'DELETE', `/v1/m/identity/sso/identities/${kimId}`, as())).status, 204);
  const back = await ssoLogin('kim-a');
  assert.equal(back.status, 200, back.text);
  assert.equal(back.json().user_id, kimId);
});

test('local accounts: ASCII letters fold (Kim@ is kim@), every other code point must be identical', async () => {
  const dup = await call(server, 'POST', '/v1/users', as({ email: 'Kim@example.test', password: KIM_PASSWORD }));
  assert.equal(dup.status, 409, dup.text);
  const folded = await post('/v1/auth/login', { email: 'KIM@EXAMPLE.TEST', password: KIM_PASSWORD });
  assert.equal(folded.status, 200, folded.text);
  const created = await call(server, 'POST', '/v1/users', as({ email: 'Ärger@Example.test', password: KIM_PASSWORD }));
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json().email, 'Ärger@example.test');
  assert.equal((await post('/v1/auth/login', { email: 'ÄRGER@EXAMPLE.TEST', password: KIM_PASSWORD })).status, 200);
  assert.equal((await post('/v1/auth/login', { email: 'ärger@example.test', password: KIM_PASSWORD })).status, 401);
  assert.equal((await post('/v1/auth/login', { email: '\u212Aim@example.test', password: KIM_PASSWORD })).status, 401);
  const other = await call(server, 'POST', '/v1/users', as({ email: 'ärger@example.test', password: KIM_PASSWORD }));
  assert.equal(other.status, 201, other.text);
});
