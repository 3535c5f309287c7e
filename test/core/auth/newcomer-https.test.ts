/**
 * The newcomer's path against the real `svc serve` over HTTPS: read the setup token from stdout,
 * redeem it, log in, whoami, issue an API key, use it, rotate it (old key 401), revoke it (401).
 * Also: the token never reaches the log stream, its digest file is 0600 and gone once redeemed,
 * a restart mints nothing, and a body above a route's limit is 413 on the wire.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { call, startServer, tempDir, type TestServer } from '../../helpers/server.js';
import { rmSync } from 'node:fs';

let server: TestServer;
const dataDir = tempDir('svc-newcomer-');
const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const bearer = (token: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, ...extra } });

before(async () => {
  server = await startServer({ dataDir });
});
after(async () => {
  if (server) await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('newcomer: setup token from stdout → setup → login → whoami → API key issue/use/rotate/revoke', async () => {
  const m = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout());
  assert.ok(m, `stdout: ${server.stdout()}`);
  const setupToken = m[1] as string;
  assert.ok(!JSON.stringify(server.logs()).includes(setupToken), 'the setup token is never logged');
  assert.equal((await stat(path.join(dataDir, 'setup.token'))).mode & 0o777, 0o600);

  const gated = await call(server, 'GET', '/v1/auth/whoami');
  assert.equal(gated.status, 409);
  assert.equal(gated.json().error.code, 'setup_required');
  assert.equal((await call(server, 'GET', '/v1/server-info')).json().setup_required, true);

  const setup = await call(
    server,
    'POST',
    '/v1/setup',
    json({ token: setupToken, email: 'newcomer@example.test', password: 'a newcomer password', organization: 'Newco' }),
  );
  assert.equal(setup.status, 201, setup.text);
  assert.equal(setup.json().organization.name, 'Newco');
  await assert.rejects(stat(path.join(dataDir, 'setup.token')));
  assert.equal((await call(server, 'GET', '/v1/server-info')).json().setup_required, false);
  assert.equal(
    (await call(server, 'POST', '/v1/setup', json({ token: setupToken, email: 'x@example.test', password: 'another password' }))).json()
      .error.code,
    'setup_complete',
  );

  const login = await call(server, 'POST', '/v1/auth/login', json({ email: 'newcomer@example.test', password: 'a newcomer password' }));
  assert.equal(login.status, 200, login.text);
  const session = login.json().token as string;
  const who = await call(server, 'GET', '/v1/auth/whoami', bearer(session));
  assert.equal(who.status, 200);
  assert.deepEqual([who.json().kind, who.json().superadmin, who.json().grants[0].role], ['user', true, 'owner']);
  assert.ok(who.headers['ratelimit-limit'], 'RateLimit-* headers on authenticated answers');

  const issued = await call(server, 'POST', '/v1/tokens', {
    body: JSON.stringify({ name: 'ci' }),
    headers: { ...bearer(session).headers, 'content-type': 'application/json' },
  });
  assert.equal(issued.status, 201, issued.text);
  const key = issued.json();
  const used = await call(server, 'GET', '/v1/auth/whoami', bearer(key.token));
  assert.deepEqual([used.status, used.json().kind, used.json().actor], [200, 'token', `token:${key.id}`]);

  const rotated = await call(server, 'POST', `/v1/tokens/${key.id}/rotate`, bearer(session));
  assert.equal(rotated.status, 201, rotated.text);
  const next = rotated.json();
  assert.equal((await call(server, 'GET', '/v1/auth/whoami', bearer(key.token))).status, 401, 'old key is dead');
  assert.equal((await call(server, 'GET', '/v1/auth/whoami', bearer(next.token))).status, 200);

  assert.equal((await call(server, 'DELETE', `/v1/tokens/${next.id}`, bearer(session))).status, 204);
  const revoked = await call(server, 'GET', '/v1/auth/whoami', bearer(next.token));
  assert.equal(revoked.status, 401);
  assert.equal(revoked.json().error.code, 'unauthenticated');

  // The events reached the durable ledger: the system chain through the audit API, and org.create opened the tenant chain.
  const system = await call(server, 'GET', '/v1/audit/system?limit=1000', bearer(session));
  assert.equal(system.status, 200, system.text);
  const actions = (system.json().items as Array<{ action: string }>).map((r) => r.action);
  for (const a of ['setup.complete', 'user.create', 'membership.create', 'auth.login', 'token.create', 'token.rotate', 'token.revoke'])
    assert.ok(actions.includes(a), `${a} in ${actions.join(',')}`);
  const chain = await call(server, 'GET', '/v1/audit?limit=1', bearer(session));
  assert.equal(chain.status, 200, chain.text);
  assert.deepEqual([chain.json().items[0].seq, chain.json().items[0].action], [1, 'org.create']);

  const big = await call(server, 'POST', '/v1/auth/login', json({ email: 'a@b.c', password: 'x'.repeat(20_000) }));
  assert.equal(big.status, 413);
  assert.equal(big.json().error.code, 'request_body_too_large');
  assert.ok(!JSON.stringify(server.logs()).includes(session.slice(32)), 'session secrets never reach the log');
});

test('restart after setup: no new setup token is minted or printed', async () => {
  await server.stop();
  server = await startServer({ dataDir });
  assert.doesNotMatch(server.stdout(), /svcst_/);
  await assert.rejects(stat(path.join(dataDir, 'setup.token')));
  const login = await call(server, 'POST', '/v1/auth/login', json({ email: 'newcomer@example.test', password: 'a newcomer password' }));
  assert.equal(login.status, 200);
});
