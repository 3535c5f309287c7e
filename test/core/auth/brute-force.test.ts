/**
 * Brute force at the production scrypt cost: the 6th wrong password within 15 minutes is 429
 * `locked_out`, the right password is refused too until the window passes, per account and per
 * IP; and unknown-user vs wrong-password logins do the same hashing work (timing, loosely).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { ADMIN, bootstrap, createHarness, type Harness } from '../../auth/harness.js';
import { PASSWORD_PARAMS } from '../../../src/auth/passwords.js';

describe('brute force (production password cost)', () => {
  let ts: TestStore;
  let h: Harness;
  let clock = Date.now();
  before(async () => {
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    h = await createHarness(ts.store, { passwordParams: PASSWORD_PARAMS, now: () => clock });
    await bootstrap(h);
  });
  after(async () => {
    await h?.dispose();
    await ts?.dispose();
  });

  const attempt = (password: string, email: string = ADMIN.email, ip = '127.0.0.1') =>
    h.app.handle({
      method: 'POST',
      path: '/v1/auth/login',
      query: '',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ email, password })),
      remoteAddress: ip,
    });

  test('6th wrong password → 429 locked_out with Retry-After; the right password is refused until the window passes', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await attempt(`wrong password ${i}!!`, ADMIN.email, '10.0.0.1');
      assert.equal(res.status, 401, `attempt ${i + 1}`);
      clock += 1000;
    }
    const sixth = await attempt('wrong password 6!!', ADMIN.email, '10.0.0.2');
    assert.equal(sixth.status, 429);
    assert.equal(JSON.parse(String(sixth.body)).error.code, 'locked_out');
    const retry = Number(sixth.headers['retry-after']);
    assert.ok(retry > 800 && retry <= 900, `Retry-After ${retry}`);
    const right = await attempt(ADMIN.password, ADMIN.email, '10.0.0.3');
    assert.equal(right.status, 429, 'the right password is refused during lockout, even from another IP');
    assert.ok(h.audit.appended.some((r) => r.draft.action === 'auth.login_failed' && r.draft.meta?.['reason'] === 'locked_out'));
    clock += 15 * 60_000;
    const after = await attempt(ADMIN.password, ADMIN.email, '10.0.0.3');
    assert.equal(after.status, 200, 'the window has passed');
  });

  test('per client IP: 5 failures across accounts lock the IP', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await attempt('wrong password!!', `user${i}@example.test`, '10.9.9.9')).status, 401);
    const locked = await attempt(ADMIN.password, ADMIN.email, '10.9.9.9');
    assert.equal(locked.status, 429);
    assert.equal((await attempt(ADMIN.password, ADMIN.email, '10.9.9.10')).status, 200, 'other IPs are unaffected');
  });

  test('unknown user and wrong password take indistinguishable time (same scrypt work)', async () => {
    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < 6; i++) {
      for (const [email, into] of [['ghost@example.test', unknown], [ADMIN.email, wrong]] as const) {
        clock += 16 * 60_000; // stay clear of the lockout
        const t0 = process.hrtime.bigint();
        const res = await attempt('definitely wrong!!', email, `10.1.${i}.1`);
        into.push(Number(process.hrtime.bigint() - t0) / 1e6);
        assert.equal(res.status, 401);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const [mu, mw] = [median(unknown), median(wrong)];
    // Both pay ~one scrypt at 64 MiB (tens to hundreds of ms); a skipped hash would be ~100x faster.
    assert.ok(mu > 30 && mw > 30, `medians ${mu} / ${mw} ms`);
    assert.ok(Math.max(mu, mw) / Math.min(mu, mw) < 2, `medians differ too much: unknown ${mu} ms, wrong ${mw} ms`);
  });
});
