/**
 * ID-token checks against a provider that misbehaves on purpose: a loopback OpenID provider whose
 * token endpoint answers the ID token the test asks for (signed with node:crypto RS256). A good token
 * passes; after a key rotation the new key passes (JWKS fetched again); a key id the JWKS does not
 * hold, a wrong audience, an expired token, a wrong nonce and a wrong issuer each fail with 401.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, setupAndLogin, startServer, type TestServer } from '../../helpers/server.js';
import { createTempDatabase, pgTestDsn, type TempDatabase } from '../../helpers/pg.js';

// The provider is on loopback: SSO discovery goes through the egress guard, which allows loopback only
// under the development flag (inherited by the server this test starts).
process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';

// SVC_TEST_SSO_STORE=postgres runs the same checks with the server on Postgres (provisioning writes there).
const onPostgres = process.env['SVC_TEST_SSO_STORE'] === 'postgres';
let db: TempDatabase | undefined;

const CLIENT_ID = 'svc-console';
let server: TestServer;
let session: string;
let tenant: string;
let provider: Server;
let issuer: string;
const keyA = { kid: 'key-a', ...generateKeyPairSync('rsa', { modulusLength: 2048 }) };
const keyB = { kid: 'key-b', ...generateKeyPairSync('rsa', { modulusLength: 2048 }) };
const keyC = { kid: 'key-c', ...generateKeyPairSync('rsa', { modulusLength: 2048 }) };
type Key = { kid: string; publicKey: KeyObject; privateKey: KeyObject };
let published: Key[] = [keyA];
/** What the token endpoint signs next. */
let next: { key: Key; claims: Record<string, unknown> } | undefined;

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
function jwt(key: Key, claims: Record<string, unknown>): string {
  const head = `${b64({ alg: 'RS256', typ: 'JWT', kid: key.kid })}.${b64(claims)}`;
  return `${head}.${sign('sha256', Buffer.from(head), key.privateKey).toString('base64url')}`;
}

before(async () => {
  provider = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/openid-configuration') {
      return send(200, {
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (url.pathname === '/jwks')
      return send(200, {
        keys: published.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, alg: 'RS256', use: 'sig' })),
      });
    if (url.pathname === '/token' && req.method === 'POST') {
      req.resume();
      return req.on('end', () =>
        next
          ? send(200, { access_token: 'opaque-at', token_type: 'Bearer', expires_in: 60, id_token: jwt(next.key, next.claims) })
          : send(400, { error: 'invalid_grant' }),
      );
    }
    send(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', () => r()));
  issuer = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  if (onPostgres) {
    const target = await pgTestDsn();
    if (target.skip) throw new Error(target.skip);
    db = await createTempDatabase(target.dsn as string);
  }
  server = await startServer(db ? { args: ['--store', 'postgres', '--dsn', db.dsn] } : {});
  ({ token: session, tenant } = await setupAndLogin(server, { email: 'root@example.test', password: 'correct horse battery staple' }));
  const put = await call(server, 'PUT', '/v1/console/sso', {
    headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      issuer,
      client_id: CLIENT_ID,
      client_secret_ref: null,
      scopes: ['openid', 'email'],
      role_mapping: [{ claim: 'groups', value: 'ops', tenant, role: 'viewer' }],
      allowed_domains: ['example.test'],
    }),
  });
  assert.equal(put.status, 200, put.text);
});
after(async () => {
  await server?.stop();
  await db?.drop();
  provider?.closeAllConnections();
  provider?.close();
});

/** One login: start (for a real state and nonce), the provider's next ID token, complete. */
async function loginWith(
  key: Key,
  overrides: (nonce: string) => Record<string, unknown> = () => ({}),
): Promise<{ status: number; json: () => any; text: string }> {
  const started = await call(server, 'POST', '/v1/m/identity/sso/start', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uri: 'http://127.0.0.1:7/callback' }),
  });
  assert.equal(started.status, 200, started.text);
  const { authorization_url, state } = started.json();
  const nonce = new URL(authorization_url).searchParams.get('nonce') as string;
  const now = Math.floor(Date.now() / 1000);
  next = {
    key,
    claims: {
      iss: issuer,
      sub: 'user-1',
      aud: CLIENT_ID,
      iat: now,
      exp: now + 300,
      nonce,
      email: 'bob@example.test',
      email_verified: true,
      groups: ['ops'],
      ...overrides(nonce),
    },
  };
  return call(server, 'POST', '/v1/m/identity/sso/complete', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ state, code: 'code-1' }),
  });
}

test('a good ID token signed with the published key gives a session', async () => {
  const res = await loginWith(keyA);
  assert.equal(res.status, 200, res.text);
  assert.match(res.json().token, /^svcs_/);
});

test('key rotation: the provider publishes a new key and signs with it; the next login fetches it', async () => {
  published = [keyB];
  const res = await loginWith(keyB);
  assert.equal(res.status, 200, res.text);
});

test('refused with 401: unknown key id, wrong audience, expired, wrong nonce, wrong issuer', async () => {
  const cases: Array<[string, Key, (nonce: string) => Record<string, unknown>]> = [
    ['unknown key id', keyC, () => ({})],
    ['wrong audience', keyB, () => ({ aud: 'another-client' })],
    ['expired', keyB, () => ({ iat: Math.floor(Date.now() / 1000) - 1200, exp: Math.floor(Date.now() / 1000) - 600 })],
    ['wrong nonce', keyB, () => ({ nonce: 'not-the-nonce' })],
    ['wrong issuer', keyB, () => ({ iss: 'http://127.0.0.1:1' })],
    ['retired key after rotation', keyA, () => ({})],
  ];
  for (const [name, key, claims] of cases) {
    const res = await loginWith(key, claims);
    assert.equal(res.status, 401, `${name}: ${res.text}`);
    assert.equal(res.json().error.code, 'unauthenticated', name);
    assert.match(res.json().error.message, /^SSO login failed: /, name);
  }
});

test('refused with 401: an azp naming another client, an iat a day ahead', async () => {
  const day = 86_400;
  const cases: Array<[string, (nonce: string) => Record<string, unknown>]> = [
    ['azp of another client', () => ({ azp: 'another-client' })],
    ['azp of another client with two audiences', () => ({ aud: [CLIENT_ID, 'another-client'], azp: 'another-client' })],
    ['two audiences without azp', () => ({ aud: [CLIENT_ID, 'another-client'] })],
    ['iat a day in the future', () => ({ iat: Math.floor(Date.now() / 1000) + day, exp: Math.floor(Date.now() / 1000) + day + 300 })],
  ];
  for (const [name, claims] of cases) {
    const res = await loginWith(keyB, claims);
    assert.equal(res.status, 401, `${name}: ${res.text}`);
    assert.match(res.json().error.message, /^SSO login failed: /, name);
  }
  const ok = await loginWith(keyB, () => ({ azp: CLIENT_ID }));
  assert.equal(ok.status, 200, ok.text);
});

const authz = () => ({ authorization: `Bearer ${session}` });
async function systemAudit(action: string): Promise<Array<Record<string, unknown>>> {
  const res = await call(server, 'GET', '/v1/audit/system?limit=1000', { headers: authz() });
  const items = res.json().items as Array<{ action: string; meta?: string }>;
  return items.filter((a) => a.action === action).map((a) => JSON.parse(a.meta ?? '{}'));
}

test('redirect_uri: only the loopback callback (RFC 8252, any port) and the configured ones; refusals are recorded', async () => {
  const start = (redirect_uri: string) =>
    call(server, 'POST', '/v1/m/identity/sso/start', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uri }),
    });
  for (const uri of [
    'https://evil.example/callback',
    'http://127.0.0.1:7/elsewhere',
    'http://127.0.0.1:7/callback?next=https://evil.example',
    'http://localhost:7/callback',
    'https://console.example.test/sso/callback',
  ]) {
    const res = await start(uri);
    assert.equal(res.status, 400, `${uri}: ${res.text}`);
  }
  assert.equal((await start('http://127.0.0.1:41234/callback')).status, 200);
  assert.equal((await start('http://[::1]:41234/callback')).status, 200);
  const refused = await systemAudit('auth.sso_start_refused');
  assert.ok(refused.some((m) => m['reason'] === 'bad_redirect_uri' && m['ip'] === '127.0.0.1'), JSON.stringify(refused));
  const put = await call(server, 'PUT', '/v1/console/sso', {
    headers: { ...authz(), 'content-type': 'application/json' },
    body: JSON.stringify({
      issuer,
      client_id: CLIENT_ID,
      client_secret_ref: null,
      scopes: ['openid', 'email'],
      role_mapping: [{ claim: 'groups', value: 'ops', tenant, role: 'viewer' }],
      allowed_domains: ['example.test'],
      redirect_uris: ['https://console.example.test/sso/callback'],
    }),
  });
  assert.equal(put.status, 200, put.text);
  assert.equal((await start('https://console.example.test/sso/callback')).status, 200);
  assert.equal((await start('https://console.example.test/sso/callback2')).status, 400);
});

test('input-check refusals (no state, a client code_verifier, malformed JSON; a start with no redirect_uri) leave records', async () => {
  const before = (await systemAudit('auth.sso_login_failed')).filter((m) => m['reason'] === 'bad_request').length;
  const complete = (body: string) =>
    call(server, 'POST', '/v1/m/identity/sso/complete', { headers: { 'content-type': 'application/json' }, body });
  assert.equal((await complete(JSON.stringify({ code: 'code-1' }))).status, 400);
  assert.equal((await complete(JSON.stringify({ state: 's', code: 'c', code_verifier: 'mine' }))).status, 400);
  assert.equal((await complete('{"state":')).status, 400);
  const after = (await systemAudit('auth.sso_login_failed')).filter((m) => m['reason'] === 'bad_request');
  assert.equal(after.length - before, 3, JSON.stringify(after));
  assert.ok(after.every((m) => m['ip'] === '127.0.0.1' && typeof m['message'] === 'string'));
  // At start too (aggregated per address and reason): a body without redirect_uri.
  const start = await call(server, 'POST', '/v1/m/identity/sso/start', {
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(start.status, 400);
  const refused = await systemAudit('auth.sso_start_refused');
  assert.ok(refused.some((m) => m['reason'] === 'bad_request' && m['refused'] === 1), JSON.stringify(refused));
});
