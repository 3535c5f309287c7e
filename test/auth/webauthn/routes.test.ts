/** The step-up routes and page over real HTTPS, without a browser: refusals and bad input create nothing. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { call, startServer, type TestServer } from '../../helpers/server.js';

const EMAIL = 'owner@example.test';
const PASSWORD = 'correct horse battery staple';
let server: TestServer;
let session: string;
let apiKey: string;

const post = (path: string, token: string | undefined, body?: unknown) =>
  call(server, 'POST', path, {
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });

before(async () => {
  server = await startServer();
  const token = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0];
  assert.equal((await post('/v1/setup', undefined, { token, email: EMAIL, password: PASSWORD })).status, 201);
  session = (await post('/v1/auth/login', undefined, { email: EMAIL, password: PASSWORD })).json().token;
  apiKey = (await post('/v1/tokens', session, { name: 'k', superadmin: true })).json().token;
});

after(async () => {
  await server?.stop();
});

test('the step-up page is HTML whose CSP allows exactly its own inline script and style', async () => {
  const res = await call(server, 'GET', '/ui/step-up');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(res.headers['x-frame-options'], 'DENY');
  const csp = String(res.headers['content-security-policy']);
  const script = /<script>([\s\S]*?)<\/script>/.exec(res.text)?.[1] ?? '';
  const style = /<style>([\s\S]*?)<\/style>/.exec(res.text)?.[1] ?? '';
  const sha = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
  assert.ok(csp.includes(`script-src ${sha(script)}`), csp);
  assert.ok(csp.includes(`style-src ${sha(style)}`), csp);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /connect-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
});

test('ceremonies need a session: anonymous 401, API key 403', async () => {
  assert.equal((await post('/v1/m/identity/webauthn/registration/options', undefined)).status, 401);
  for (const path of ['/v1/m/identity/webauthn/registration/options', '/v1/m/identity/step-up/options']) {
    const r = await post(path, apiKey);
    assert.equal(r.status, 403, path);
    assert.match(r.json().error.message, /API keys never reach AAL3/);
  }
});

test('bad input answers a clear 4xx and registers nothing', async () => {
  const good = {
    challenge_id: randomUUID(),
    response: {
      id: 'AAAAAAAA',
      rawId: 'AAAAAAAA',
      type: 'public-key',
      response: { clientDataJSON: 'e30', attestationObject: 'oA' },
      clientExtensionResults: {},
    },
  };
  const cases: Array<[string, unknown, number, string]> = [
    ['malformed JSON', '{"challenge_id":', 400, 'bad_request'],
    ['missing response', { challenge_id: good.challenge_id }, 400, 'bad_request'],
    ['unknown top-level field', { ...good, extra: 1 }, 400, 'bad_request'],
    ['non-UUID challenge id', { ...good, challenge_id: 'nope' }, 400, 'bad_request'],
    ['wrong type', { ...good, response: { ...good.response, type: 'password' } }, 400, 'bad_request'],
    ['not base64url', { ...good, response: { ...good.response, rawId: 'a b' } }, 400, 'bad_request'],
    ['name too long', { ...good, name: 'x'.repeat(101) }, 400, 'bad_request'],
    ['unknown challenge', good, 400, 'bad_request'],
    [
      'oversized body',
      { ...good, response: { ...good.response, response: { ...good.response.response, attestationObject: 'A'.repeat(70_000) } } },
      413,
      'request_body_too_large',
    ],
  ];
  for (const [name, body, status, code] of cases) {
    const r = await post('/v1/m/identity/webauthn/registration', session, body);
    assert.equal(r.status, status, `${name}: ${r.text}`);
    assert.equal(r.json().error.code, code, name);
  }
  const stepUp = await post('/v1/m/identity/step-up', session, {
    challenge_id: randomUUID(),
    response: {
      id: 'AAAAAAAA',
      rawId: 'AAAAAAAA',
      type: 'public-key',
      response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' },
      clientExtensionResults: {},
    },
  });
  assert.equal(stepUp.status, 400, stepUp.text);
  // A challenge issued to this session, answered with a forged clientDataJSON: 403, and nothing stored.
  const start = (await post('/v1/m/identity/webauthn/registration/options', session)).json();
  assert.equal(start.public_key.authenticatorSelection.userVerification, 'required');
  const forged = Buffer.from(
    JSON.stringify({ type: 'webauthn.create', challenge: start.public_key.challenge, origin: `https://localhost:${server.port}` }),
  ).toString('base64url');
  const r = await post('/v1/m/identity/webauthn/registration', session, {
    ...good,
    challenge_id: start.challenge_id,
    response: { ...good.response, response: { clientDataJSON: forged, attestationObject: 'oA' } },
  });
  assert.equal(r.status, 403, r.text);
  const list = await call(server, 'GET', '/v1/m/identity/webauthn/credentials', { headers: { authorization: `Bearer ${session}` } });
  assert.deepEqual(list.json(), { items: [], has_more: false });
  const none = await post('/v1/m/identity/step-up/options', session);
  assert.equal(none.status, 409);
  const del = await call(server, 'DELETE', `/v1/m/identity/webauthn/credentials/${randomUUID()}`, {
    headers: { authorization: `Bearer ${session}` },
  });
  assert.equal(del.status, 403);
  assert.equal(del.json().error.code, 'step_up_required');
});
