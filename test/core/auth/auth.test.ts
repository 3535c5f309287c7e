/** Login, whoami, refresh, logout, bearer parsing and the per-principal rate limiter (SQLite). */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { ADMIN, bootstrap, createHarness, type Harness } from '../../auth/harness.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';
import { mintToken } from '../../../src/auth/opaque-token.js';

describe('auth routes', () => {
  let ts: TestStore;
  let h: Harness;
  let admin: { session: string; userId: string; tenant: string };
  before(async () => {
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    h = await createHarness(ts.store);
    admin = await bootstrap(h);
  });
  after(async () => {
    await h?.dispose();
    await ts?.dispose();
  });

  test('login answers {token, session_id, expires_at} 12 h ahead and audits auth.login on the system chain', async () => {
    const before = Date.now();
    const res = await h.call('POST', '/v1/auth/login', { body: ADMIN });
    assert.equal(res.status, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['expires_at', 'session_id', 'token']);
    assert.match(body.token, /^svcs_[A-Z2-7]{26}_[A-Z2-7]{52}$/);
    const ttl = Date.parse(body.expires_at) - before;
    assert.ok(ttl > 12 * 3600_000 - 5_000 && ttl <= 12 * 3600_000 + 5_000, `ttl ${ttl}`);
    const rec = h.audit.appended.at(-1)!;
    assert.equal(rec.tenant, SYSTEM_TENANT);
    assert.deepEqual(
      [rec.draft.action, rec.draft.actor, rec.draft.target_kind, rec.draft.target_id],
      ['auth.login', `user:${admin.userId}`, 'session', body.session_id],
    );
  });

  test('whoami has the DECISIONS.md shape for a session', async () => {
    const res = await h.call('GET', '/v1/auth/whoami', { token: admin.session });
    assert.equal(res.status, 200);
    const who = res.json();
    assert.deepEqual(Object.keys(who).sort(), ['aal', 'actor', 'amr', 'grants', 'kind', 'superadmin', 'user_id']);
    assert.equal(who.kind, 'user');
    assert.equal(who.actor, `user:${admin.userId}`);
    assert.equal(who.aal, 1);
    assert.deepEqual(who.amr, ['pwd']);
    assert.equal(who.grants[0].tenant, admin.tenant);
    assert.equal(who.grants[0].role, 'owner');
    assert.ok(who.grants[0].permissions.includes('user:admin'));
    assert.ok(!who.grants[0].permissions.includes('system:admin'));
  });

  test('wrong password and unknown user: the same generic 401, both audited as auth.login_failed', async () => {
    const a = await h.call('POST', '/v1/auth/login', { body: { email: ADMIN.email, password: 'not the password at all' } });
    const b = await h.call('POST', '/v1/auth/login', { body: { email: 'nobody@example.test', password: 'not the password at all' } });
    assert.equal(a.status, 401);
    assert.equal(b.status, 401);
    assert.deepEqual(a.json(), b.json());
    const failed = h.audit.appended.filter((r) => r.draft.action === 'auth.login_failed');
    assert.deepEqual(
      failed.map((r) => [r.tenant, r.draft.actor, r.draft.meta?.['reason']]),
      [
        [SYSTEM_TENANT, `user:${admin.userId}`, 'wrong_password'],
        [SYSTEM_TENANT, 'anonymous', 'unknown_user'],
      ],
    );
    assert.ok(!JSON.stringify(failed).includes('not the password'), 'passwords never reach the ledger');
  });

  test('refresh rotates: a new token works, the old one is 401 at once', async () => {
    const old = (await h.call('POST', '/v1/auth/login', { body: ADMIN })).json();
    assert.equal((await h.call('GET', '/v1/auth/whoami', { token: old.token })).status, 200, 'warm the credential cache');
    const res = await h.call('POST', '/v1/auth/refresh', { token: old.token });
    assert.equal(res.status, 200);
    const fresh = res.json();
    assert.notEqual(fresh.token, old.token);
    assert.notEqual(fresh.session_id, old.session_id);
    assert.equal((await h.call('GET', '/v1/auth/whoami', { token: old.token })).status, 401);
    assert.equal((await h.call('GET', '/v1/auth/whoami', { token: fresh.token })).status, 200);
    assert.equal((await h.call('POST', '/v1/auth/refresh', { token: old.token })).status, 401, 'the old token cannot refresh twice');
    const rec = h.audit.appended.filter((r) => r.draft.action === 'auth.refresh').at(-1)!;
    assert.equal(rec.draft.meta?.['previous_session'], old.session_id);
  });

  test('logout revokes the session at once (204), audited', async () => {
    const s = (await h.call('POST', '/v1/auth/login', { body: ADMIN })).json();
    assert.equal((await h.call('GET', '/v1/auth/whoami', { token: s.token })).status, 200);
    const res = await h.call('POST', '/v1/auth/logout', { token: s.token });
    assert.equal(res.status, 204);
    assert.equal((await h.call('GET', '/v1/auth/whoami', { token: s.token })).status, 401);
    assert.equal(h.audit.appended.at(-1)!.draft.action, 'auth.logout');
  });

  test('missing, malformed, truncated, unknown and wrong-secret tokens are 401 with WWW-Authenticate', async () => {
    const good = admin.session;
    const unknown = mintToken('session').token;
    const wrongSecret = good.slice(0, 32) + mintToken('session').token.slice(32);
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: good },
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      { authorization: `Bearer ${good.slice(0, -1)}` },
      { authorization: `Bearer ${good.slice(0, 20)}` },
      { authorization: `Bearer ${good}x` },
      { authorization: `Bearer ${unknown}` },
      { authorization: `Bearer ${wrongSecret}` },
      { authorization: `Bearer ${good.replace('svcs_', 'svck_')}` },
      { authorization: 'Bearer ' },
      { authorization: `Bearer ${'A'.repeat(5000)}` },
    ];
    for (const headers of cases) {
      const res = await h.call('GET', '/v1/auth/whoami', { headers });
      assert.equal(res.status, 401, JSON.stringify(headers).slice(0, 80));
      assert.equal(res.json().error.code, 'unauthenticated');
      assert.match(res.headers['www-authenticate'] ?? '', /^Bearer realm="svc"/);
    }
  });
});

describe('rate limiter', () => {
  test('per principal: 429 rate_limited with Retry-After and RateLimit-* once the burst is spent', async () => {
    const ts = await createSqliteTestStore();
    await ts.store.migrate();
    let clock = Date.now();
    const h = await createHarness(ts.store, { rateLimit: { ratePerSecond: 1, burst: 3 }, now: () => clock });
    try {
      const admin = await bootstrap(h);
      const key = (await h.call('POST', '/v1/tokens', { token: admin.session, body: { name: 'other' } })).json().token;
      clock += 10_000; // refill the session's bucket
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 4; i++) {
        last = await h.call('GET', '/v1/auth/whoami', { token: admin.session });
        statuses.push(last.status);
        if (i === 0) assert.deepEqual([last.headers['ratelimit-limit'], last.headers['ratelimit-remaining']], ['3', '2']);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      assert.equal(last!.json().error.code, 'rate_limited');
      assert.equal(last!.headers['retry-after'], '1');
      assert.equal(last!.headers['ratelimit-remaining'], '0');
      // Another principal (an API key: actor token:<id>) has its own bucket.
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: key })).status, 200);
    } finally {
      await h.dispose();
      await ts.dispose();
    }
  });
});
