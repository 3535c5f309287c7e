/** First boot and POST /v1/setup on both backends: token on "stdout", digest 0600, one winner, gate. */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { ADMIN, createHarness, identityCounts, printedSetupToken, type Harness } from '../../auth/harness.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';
import { startIdentity, DEMO_ADMIN } from '../../../src/core/setup/startup.js';
import { IdentityRuntime } from '../../../src/auth/runtime.js';

for (const b of await testStores()) {
  describe(`${b.backend}: setup`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: Harness;
    let replica: IdentityRuntime;
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createHarness(ts.store);
      // A second replica's view of the same database (no token of its own).
      replica = new IdentityRuntime({ store: ts.store, dataDir: h.dataDir, routes: [] });
      await replica.loadSetupState();
    });
    after(async () => {
      await h?.dispose();
      await ts?.dispose();
    });

    test('first boot prints svcst_ + 52 base32 chars and keeps only its SHA-256 in setup.token (0600)', async () => {
      const token = printedSetupToken(h);
      assert.match(token, /^svcst_[A-Z2-7]{52}$/);
      assert.match(h.printed.join(''), /svc auth bootstrap --setup-token-file -/);
      const file = path.join(h.dataDir, 'setup.token');
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      const stored = (await readFile(file, 'utf8')).trim();
      assert.equal(stored, createHash('sha256').update(token).digest('hex'));
      assert.ok(!stored.includes(token.slice(6)));
    });

    test('a restart without users replaces the digest: the old token no longer works', async () => {
      const old = printedSetupToken(h);
      h.printed.length = 0;
      await startIdentity(h.runtime, { audit: h.audit, seedDemo: false, print: (t) => h.printed.push(t), log: { info() {}, warn() {} } });
      const fresh = printedSetupToken(h);
      assert.notEqual(fresh, old);
      const res = await h.call('POST', '/v1/setup', { body: { token: old, ...ADMIN } });
      assert.equal(res.status, 403);
      assert.equal(res.json().error.code, 'forbidden');
    });

    test('until setup every non-exempt route answers 409 setup_required; health does not', async () => {
      for (const [method, p] of [
        ['GET', '/v1/auth/whoami'],
        ['GET', '/v1/tokens'],
        ['POST', '/v1/auth/logout'],
        ['GET', '/v1/system/orgs'],
        ['GET', '/v1/members'],
      ] as const) {
        const res = await h.call(method, p);
        assert.equal(res.status, 409, `${method} ${p}`);
        assert.equal(res.json().error.code, 'setup_required');
      }
      assert.equal((await h.call('GET', '/healthz')).status, 200);
    });

    test('weak password and wrong token create nothing', async () => {
      const before = await identityCounts(ts.store);
      const weak = await h.call('POST', '/v1/setup', { body: { token: printedSetupToken(h), email: 'a@b.test', password: 'short' } });
      assert.equal(weak.status, 400);
      assert.equal(weak.json().error.code, 'weak_password');
      const wrong = await h.call('POST', '/v1/setup', { body: { token: 'svcst_' + 'A'.repeat(52), ...ADMIN } });
      assert.equal(wrong.status, 403);
      assert.deepEqual(await identityCounts(ts.store), before);
      assert.equal(h.runtime.setupRequired(), true);
    });

    test('concurrent redemptions: exactly one wins, the others get 409 setup_complete', async () => {
      const token = printedSetupToken(h);
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          h.call('POST', '/v1/setup', {
            body: { token, email: `admin${i}@example.test`, password: ADMIN.password, organization: `Org ${i}` },
          }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [201, 409, 409, 409], results.map((r) => r.text).join('\n'));
      for (const r of results.filter((x) => x.status === 409)) assert.equal(r.json().error.code, 'setup_complete');
      const won = results.find((r) => r.status === 201)!.json();
      assert.equal(won.user.superadmin, true);
      assert.match(won.organization.name, /^Org \d$/);
      assert.deepEqual(
        {
          users: (await identityCounts(ts.store)).users,
          tenants: (await identityCounts(ts.store)).tenants,
          memberships: (await identityCounts(ts.store)).memberships,
        },
        { users: 1, tenants: 1, memberships: 1 },
      );
      await assert.rejects(stat(path.join(h.dataDir, 'setup.token')), 'the digest is deleted once redeemed');
      assert.equal(h.runtime.setupRequired(), false);
      // Audit: org.create is seq 1 of the new tenant's chain; the system chain has the setup events.
      const orgCreate = h.audit.appended.filter((a) => a.tenant === won.organization.id);
      assert.deepEqual(orgCreate.map((a) => a.draft.action), ['org.create']);
      assert.equal(orgCreate[0]!.draft.actor, `user:${won.user.id}`);
      const system = h.audit.appended.filter((a) => a.tenant === SYSTEM_TENANT).map((a) => a.draft.action);
      assert.deepEqual(system, ['setup.complete', 'user.create', 'membership.create']);
    });

    test('another replica sees the completed setup within about a second, without a restart', async () => {
      const deadline = Date.now() + 5_000;
      while (replica.setupRequired() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(replica.setupRequired(), false);
    });

    test('after setup: 409 setup_complete, and a restart mints no token', async () => {
      const res = await h.call('POST', '/v1/setup', { body: { token: 'svcst_' + 'A'.repeat(52), ...ADMIN } });
      assert.equal(res.status, 409);
      assert.equal(res.json().error.code, 'setup_complete');
      const again = await createHarness(ts.store);
      try {
        assert.deepEqual(again.printed, []);
        assert.equal(again.runtime.setupRequired(), false);
        await assert.rejects(stat(path.join(again.dataDir, 'setup.token')));
      } finally {
        await again.dispose();
      }
    });
  });
}

describe('seed-demo', () => {
  test('provisions the documented demo administrator and tenant instead of a setup token', async () => {
    const [sqlite] = await testStores();
    const ts = await sqlite!.create();
    await ts.store.migrate();
    const h = await createHarness(ts.store, { seedDemo: true });
    try {
      assert.deepEqual(h.printed, []);
      assert.equal(h.runtime.setupRequired(), false);
      const res = await h.call('POST', '/v1/auth/login', { body: { email: DEMO_ADMIN.email, password: DEMO_ADMIN.password } });
      assert.equal(res.status, 200, res.text);
      const who = (await h.call('GET', '/v1/auth/whoami', { token: res.json().token })).json();
      assert.equal(who.superadmin, true);
      assert.equal(who.grants.length, 1);
      const orgs = (await h.call('GET', '/v1/system/orgs', { token: res.json().token })).json();
      assert.deepEqual(orgs.items.map((o: { name: string }) => o.name), ['Demo Tenant']);
    } finally {
      await h.dispose();
      await ts.dispose();
    }
  });
});
