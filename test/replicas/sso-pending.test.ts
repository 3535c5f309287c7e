/**
 * Pending SSO logins shared by replicas (issue 48 item 3, docs/sso.md): two `svc serve` replicas on
 * one PostgreSQL database and a real OpenID provider. A login started on one replica completes on the
 * other, once; the per-address bound on pending logins holds across both replicas, and another
 * address still starts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import type { TestServer } from '../helpers/server.js';
import { providerLogin, startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { deploy, replicaSkip, rest, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();
const REDIRECT = 'http://127.0.0.1:9/callback';

describe('pending SSO logins shared by replicas', { skip }, () => {
  let dep: Deployment;
  let provider: TestProvider;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    dep = await deploy(2);
    const { session, tenant } = await setup(dep);
    [a, b] = dep.replicas as [TestServer, TestServer];
    provider = await startProvider({ publicClient: true });
    provider.accounts.set('alice', { email: 'alice@example.test', email_verified: true, groups: ['ops'] });
    const put = await rest(a, 'PUT', '/v1/console/sso', {
      token: session,
      body: {
        issuer: provider.issuer,
        client_id: provider.clientId,
        client_secret_ref: null,
        scopes: ['openid', 'email', 'groups'],
        role_mapping: [{ claim: 'groups', value: 'ops', tenant, role: 'viewer' }],
      },
    });
    assert.equal(put.status, 200, put.text);
  });
  after(async () => {
    await dep?.stop();
    await provider?.stop();
  });

  test('a login started on one replica completes on the other, once', { timeout: 60_000 }, async () => {
    const started = await rest(a, 'POST', '/v1/m/identity/sso/start', { body: { redirect_uri: REDIRECT } });
    assert.equal(started.status, 200, started.text);
    const cb = await providerLogin(started.json().authorization_url, 'alice', REDIRECT);
    const body = { state: cb.get('state'), code: cb.get('code'), iss: cb.get('iss') ?? undefined };
    const done = await rest(b, 'POST', '/v1/m/identity/sso/complete', { body });
    assert.equal(done.status, 200, done.text);
    assert.match(done.json().token, /^svcs_/);
    assert.equal((await rest(a, 'POST', '/v1/m/identity/sso/complete', { body })).status, 401);
  });

  test('the per-address bound holds across replicas; another address still starts', { timeout: 120_000 }, async () => {
    const flooder = new Agent({ connect: { ca: a.certPem }, localAddress: '127.0.0.2' });
    try {
      let admitted = 0;
      for (let i = 0; i < 60; i++) {
        const server = i % 2 === 0 ? a : b;
        const res = await request(`${server.url}/v1/m/identity/sso/start`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uri: REDIRECT }),
          dispatcher: flooder,
        });
        const text = await res.body.text();
        if (res.statusCode === 200) admitted++;
        else assert.equal(res.statusCode, 429, text);
      }
      assert.ok(admitted <= 20, `${admitted} of 60 admitted from one address over two replicas`);
      for (const server of [a, b]) {
        const other = await rest(server, 'POST', '/v1/m/identity/sso/start', { body: { redirect_uri: REDIRECT } });
        assert.equal(other.status, 200, other.text);
      }
    } finally {
      await flooder.close();
    }
  });
});
