/**
 * The bounds of pending SSO logins (sso-pending.ts) on both stores, with small limits and start
 * times in the past: an address at its bound gives way its own oldest entry once it is old enough,
 * else it is refused; at the overall bound the address holding the most gives way first, never an
 * entry younger than the minimum age; expired entries go; a state is consumed once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { admitPending, clientKey, takePending, type PendingLimits } from '../../../src/core/console/sso-pending.js';

const LIMITS: PendingLimits = { ttlMs: 600_000, perClient: 3, global: 6, minAgeMs: 60_000 };
const P = { nonce: 'n', verifier: 'v'.repeat(43), redirectUri: 'http://127.0.0.1:9/callback', issuer: 'http://127.0.0.1:1' };

for (const b of await testStores()) {
  describe(`${b.backend}: pending SSO logins, bounded per address and overall`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    const now = Date.now();
    const admit = (state: string, client: string, ageMs: number) => admitPending(h.store, state, client, P, LIMITS, now - ageMs);
    const clients = async () =>
      (await h.admin.query<{ client: string }>('select client from sso_pending_logins order by client')).map((r) => r.client).join(',');

    it('an address at its bound: its own oldest gives way once a minute old, else 429', async () => {
      await admit('a1', 'A', 120_000);
      await admit('a2', 'A', 30_000);
      await admit('a3', 'A', 20_000);
      await admit('a4', 'A', 0);
      assert.equal(await takePending(h.store, 'a1'), undefined, 'the oldest of A gave way');
      await assert.rejects(admit('a5', 'A', 0), (err: { code?: string; headers?: Record<string, string> }) => {
        assert.equal(err.code, 'rate_limited');
        assert.ok(Number(err.headers?.['retry-after']) > 0);
        return true;
      });
      assert.equal(await clients(), 'A,A,A');
    });

    it('at the overall bound the address holding the most gives way; young entries never do', async () => {
      await h.admin.query('delete from sso_pending_logins');
      await admit('a1', 'A', 300_000);
      await admit('a2', 'A', 200_000);
      await admit('a3', 'A', 100_000);
      await admit('b1', 'B', 400_000);
      await admit('c1', 'C', 500_000);
      await admit('d1', 'D', 10_000);
      await admit('e1', 'E', 0);
      assert.equal(await clients(), 'A,A,B,C,D,E', 'A (three pending) gave way its oldest, not the older B or C');
      assert.equal(await takePending(h.store, 'a1'), undefined);
      await admit('f1', 'F', 0);
      assert.equal(await clients(), 'A,B,C,D,E,F', 'A (two pending, the most) gave way a2 again');
      assert.equal(await takePending(h.store, 'a2'), undefined);
      await h.admin.query('delete from sso_pending_logins');
      for (const [i, c] of ['A', 'B', 'C', 'D', 'E', 'F'].entries()) await admit(`y${i}`, c, 1_000);
      await assert.rejects(admit('z', 'G', 0), /too many single sign-on logins in progress on this server/);
    });

    it('expired entries go at the next start; a state completes once', async () => {
      await h.admin.query('delete from sso_pending_logins');
      await admit('old', 'A', 700_000);
      await admit('fresh', 'B', 0);
      assert.equal(await clients(), 'B');
      const got = await takePending(h.store, 'fresh');
      assert.equal(got?.verifier, P.verifier);
      assert.equal(await takePending(h.store, 'fresh'), undefined);
    });
  });
}

describe('client keys', () => {
  it('IPv4 as is, IPv4-mapped unwrapped, IPv6 by its /64', () => {
    assert.equal(clientKey('192.0.2.7'), '192.0.2.7');
    assert.equal(clientKey('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(clientKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:db8:1:2::99'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64');
  });
});
