/**
 * Security state shared by replicas on one PostgreSQL database (issue 37 item 4): an API key or a
 * session revoked through one replica is refused by the other at once (its credential cache is
 * emptied, and acknowledged through LISTEN/NOTIFY, before the revocation answers), and failed logins count for the
 * deployment (five guesses in the window in all, not five per replica).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestServer } from '../helpers/server.js';
import { ADMIN, assertVerifiesEverywhere, deploy, replicaSkip, rest, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();

describe('security state shared by replicas', { skip }, () => {
  let dep: Deployment;
  let session: string;
  let tenant: string;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    dep = await deploy(2);
    ({ session, tenant } = await setup(dep));
    [a, b] = dep.replicas as [TestServer, TestServer];
  });
  after(async () => dep?.stop());

  test('an API key revoked through one replica is refused by the other at once', async () => {
    for (let round = 0; round < 3; round++) {
      const issued = await rest(a, 'POST', '/v1/tokens', { token: session, tenant, body: { name: `k${round}`, role: 'viewer', tenant } });
      assert.equal(issued.status, 201, issued.text);
      const { id, token } = issued.json();
      // The other replica resolves (and caches) the key.
      assert.equal((await rest(b, 'GET', '/v1/agents', { token, tenant })).status, 200);
      const revoked = await rest(a, 'DELETE', `/v1/tokens/${id}`, { token: session, tenant });
      assert.ok(revoked.status === 200 || revoked.status === 204, revoked.text);
      const after = await rest(b, 'GET', '/v1/agents', { token, tenant });
      assert.equal(after.status, 401, `round ${round}: the other replica still accepted the revoked key: ${after.text}`);
    }
  });

  test('a session logged out on one replica is refused by the other at once', async () => {
    // Several rounds: the other replica's eviction is asynchronous, so a single round can pass by luck.
    for (let round = 0; round < 5; round++) {
      const login = await rest(b, 'POST', '/v1/auth/login', { body: ADMIN });
      assert.equal(login.status, 200, login.text);
      const s = login.json().token;
      assert.equal((await rest(a, 'GET', '/v1/agents', { token: s, tenant })).status, 200);
      const out = await rest(b, 'POST', '/v1/auth/logout', { token: s });
      assert.ok(out.status < 300, out.text);
      assert.equal((await rest(a, 'GET', '/v1/agents', { token: s, tenant })).status, 401, `round ${round}`);
    }
  });

  test('failed logins count for the deployment: the sixth guess is locked out on every replica, the right password too', async () => {
    const email = 'victim@example.test';
    const user = await rest(a, 'POST', '/v1/users', {
      token: session,
      tenant,
      body: { email, password: 'the right password 123', role: 'viewer' },
    });
    assert.equal(user.status, 201, user.text);
    for (let i = 0; i < 5; i++) {
      const r = await rest(i % 2 === 0 ? a : b, 'POST', '/v1/auth/login', { body: { email, password: `guess ${i} wrong wrong` } });
      assert.equal(r.status, 401, `guess ${i}: ${r.text}`);
    }
    for (const r of [a, b]) {
      const locked = await rest(r, 'POST', '/v1/auth/login', { body: { email, password: 'the right password 123' } });
      assert.equal(locked.status, 429, locked.text);
      assert.ok(Number(locked.headers['retry-after']) > 0);
    }
    await assertVerifiesEverywhere(dep, session, tenant);
  });
});
