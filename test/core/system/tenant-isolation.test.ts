/**
 * Tenant-isolation matrix on SQLite and Postgres: a principal of tenant A (admin there, API key
 * and session) against every tenant-taking route with tenant B's records → 403 for B's tenant,
 * 404 for B's records (DECISIONS.md: no existence oracle), and B's state is unchanged afterwards.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createHarness, createOrg, identityCounts, userWithRole, type Harness } from '../../auth/harness.js';

for (const b of await testStores()) {
  describe(`${b.backend}: tenant isolation matrix`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: Harness;
    let tenantA: string;
    let tenantB: string;
    let a: { id: string; session: string; key: string; keyId: string };
    let bAdmin: { id: string; session: string };
    let bKey: { id: string; token: string };
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createHarness(ts.store);
      const root = await bootstrap(h);
      tenantA = await createOrg(h, root.session, 'Tenant A');
      tenantB = await createOrg(h, root.session, 'Tenant B');
      const aUser = await userWithRole(h, root.session, tenantA, 'a@example.test', 'owner');
      bAdmin = await userWithRole(h, root.session, tenantB, 'b@example.test', 'owner');
      const aKey = (await h.call('POST', '/v1/tokens', { token: aUser.session, body: { name: 'a-key' } })).json();
      a = { ...aUser, key: aKey.token, keyId: aKey.id };
      const k = (await h.call('POST', '/v1/tokens', { token: bAdmin.session, body: { name: 'b-key' } })).json();
      bKey = { id: k.id, token: k.token };
    });
    after(async () => {
      await h?.dispose();
      await ts?.dispose();
    });

    const UNKNOWN = '0190aaaa-0000-7000-8000-000000000000';
    type Case = { method: string; path: () => string; tenant?: () => string; body?: () => unknown; expect: number; code: string };
    const cases: Case[] = [
      { method: 'GET', path: () => '/v1/members', tenant: () => tenantB, expect: 403, code: 'forbidden' },
      { method: 'GET', path: () => '/v1/users', tenant: () => tenantB, expect: 403, code: 'forbidden' },
      {
        method: 'POST',
        path: () => '/v1/users',
        tenant: () => tenantB,
        body: () => ({ email: 'intruder@example.test', password: 'intruder password', role: 'viewer' }),
        expect: 403,
        code: 'forbidden',
      },
      {
        method: 'POST',
        path: () => '/v1/memberships',
        tenant: () => tenantB,
        body: () => ({ user_id: a.id, role: 'owner' }),
        expect: 403,
        code: 'forbidden',
      },
      { method: 'GET', path: () => '/v1/tokens', tenant: () => tenantB, expect: 403, code: 'forbidden' },
      { method: 'POST', path: () => '/v1/tokens', body: () => ({ name: 'into-b', tenant: tenantB }), expect: 403, code: 'forbidden' },
      { method: 'DELETE', path: () => `/v1/tokens/${bKey.id}`, expect: 404, code: 'not_found' },
      { method: 'POST', path: () => `/v1/tokens/${bKey.id}/rotate`, expect: 404, code: 'not_found' },
      { method: 'DELETE', path: () => `/v1/tokens/${bKey.id}`, tenant: () => tenantA, expect: 404, code: 'not_found' },
      { method: 'GET', path: () => '/v1/members', tenant: () => UNKNOWN, expect: 403, code: 'forbidden' },
      { method: 'POST', path: () => `/v1/users/${bAdmin.id}/disable`, expect: 403, code: 'forbidden' },
      { method: 'GET', path: () => '/v1/system/orgs', expect: 403, code: 'forbidden' },
      { method: 'DELETE', path: () => `/v1/system/orgs/${tenantB}`, expect: 403, code: 'forbidden' },
      {
        method: 'PUT',
        path: () => `/v1/system/orgs/${tenantB}/status`,
        body: () => ({ status: 'suspended' }),
        expect: 403,
        code: 'forbidden',
      },
      { method: 'PUT', path: () => `/v1/system/orgs/${tenantB}/region`, body: () => ({ region: 'xx' }), expect: 403, code: 'forbidden' },
      { method: 'GET', path: () => '/v1/system/residency', expect: 403, code: 'forbidden' },
      { method: 'GET', path: () => '/v1/users/superadmins', expect: 403, code: 'forbidden' },
    ];

    for (const credential of ['session', 'api key'] as const) {
      test(`principal of A (${credential}) against B: 403 for B's tenant, 404 for B's records, nothing changes`, async () => {
        const token = credential === 'session' ? a.session : a.key;
        const before = await identityCounts(ts.store);
        for (const c of cases) {
          const res = await h.call(c.method, c.path(), { token, tenant: c.tenant?.(), body: c.body?.() });
          assert.equal(res.status, c.expect, `${c.method} ${c.path()} ${c.tenant?.() ?? ''}: ${res.text}`);
          assert.equal(res.json().error.code, c.code, `${c.method} ${c.path()}`);
        }
        const after = await identityCounts(ts.store);
        assert.deepEqual({ ...after, sessions: 0 }, { ...before, sessions: 0 });
        assert.equal((await h.call('GET', '/v1/auth/whoami', { token: bKey.token })).status, 200, "B's key still works");
        const listed = (await h.call('GET', '/v1/tokens', { token })).json().items.map((t: { id: string }) => t.id);
        assert.ok(!listed.includes(bKey.id), "B's key is not listed to A");
        const members = (await h.call('GET', '/v1/members', { token })).json().items.map((m: { email: string }) => m.email);
        assert.deepEqual(members, ['a@example.test'], "A's implied tenant shows only A");
      });
    }

    test("B's principal sees B and not A (the matrix the other way round)", async () => {
      assert.equal((await h.call('GET', '/v1/members', { token: bKey.token, tenant: tenantA })).status, 403);
      assert.equal((await h.call('DELETE', `/v1/tokens/${a.keyId}`, { token: bAdmin.session })).status, 404);
      assert.equal((await h.call('GET', '/v1/members', { token: bAdmin.session })).json().items[0].email, 'b@example.test');
    });
  });
}
