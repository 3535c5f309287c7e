/** Tenants (system orgs), residency, members and memberships, suspension. */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createHarness, createOrg, userWithRole, type Harness } from '../../auth/harness.js';
import { stepUpSession } from '../../../src/auth/assurance.js';
import { formatTimestamp, nowEpochNs } from '../../../src/ledger/time.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';

for (const b of await testStores()) {
  describe(`${b.backend}: system orgs and memberships`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: Harness;
    let admin: { session: string; userId: string; tenant: string };
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createHarness(ts.store);
      admin = await bootstrap(h);
    });
    after(async () => {
      await h?.dispose();
      await ts?.dispose();
    });

    const stepUp = async () => {
      const row = await ts.store.transaction((tx) =>
        tx
          .selectFrom('sessions')
          .select('id')
          .where('user_id', '=', admin.userId)
          .where('revoked_at', 'is', null)
          .orderBy('created_at', 'desc')
          .executeTakeFirstOrThrow(),
      );
      await stepUpSession(ts.store, row.id, formatTimestamp(nowEpochNs() + 900n * 1_000_000_000n), {
        invalidate: () => h.runtime.invalidate(),
      });
    };

    test('create → org.create is seq 1 of the new tenant chain; list; residency; delete (soft) → 404 after', async () => {
      const res = await h.call('POST', '/v1/system/orgs', { token: admin.session, body: { name: 'Acme', region: 'eu-central' } });
      assert.equal(res.status, 201, res.text);
      const org = res.json();
      assert.deepEqual([org.name, org.region, org.status], ['Acme', 'eu-central', 'active']);
      const rec = await h.audit.append(org.id, { actor: 'system', actor_kind: 'system', action: 'probe', target_kind: '', target_id: '' });
      const chain = h.audit.appended.filter((r) => r.tenant === org.id);
      assert.deepEqual(chain.map((r) => r.draft.action), ['org.create', 'probe']);
      assert.equal(rec.seq, 2, 'org.create took seq 1');
      const list = (await h.call('GET', '/v1/system/orgs', { token: admin.session })).json();
      assert.ok(list.items.some((o: { id: string }) => o.id === org.id));
      const residency = (await h.call('GET', '/v1/system/residency', { token: admin.session })).json();
      assert.deepEqual(
        residency.items.find((i: { tenant_id: string }) => i.tenant_id === org.id),
        { tenant_id: org.id, name: 'Acme', region: 'eu-central' },
      );
      assert.equal((await h.call('DELETE', `/v1/system/orgs/${org.id}`, { token: admin.session })).status, 204);
      assert.equal((await h.call('DELETE', `/v1/system/orgs/${org.id}`, { token: admin.session })).status, 404);
      assert.equal(
        (await h.call('GET', '/v1/members', { token: admin.session, tenant: org.id })).status,
        404,
        'a superadmin naming a deleted tenant',
      );
      assert.deepEqual(
        h.audit.appended.filter((r) => r.tenant === org.id).map((r) => r.draft.action),
        ['org.create', 'probe', 'org.delete'],
      );
    });

    test('region and status need AAL3; suspended tenants refuse mutations with 423 but keep reads', async () => {
      const org = await createOrg(h, admin.session, 'Suspendable');
      const member = await userWithRole(h, admin.session, org, 'm@example.test', 'admin');
      const denied = await h.call('PUT', `/v1/system/orgs/${org}/status`, { token: admin.session, body: { status: 'suspended' } });
      assert.equal(denied.status, 403);
      assert.equal(denied.json().error.code, 'step_up_required');
      await stepUp();
      assert.equal(
        (await h.call('PUT', `/v1/system/orgs/${org}/region`, { token: admin.session, body: { region: 'us-east' } })).json().region,
        'us-east',
      );
      assert.equal(
        (await h.call('PUT', `/v1/system/orgs/${org}/status`, { token: admin.session, body: { status: 'suspended' } })).json().status,
        'suspended',
      );
      const mutate = await h.call('POST', '/v1/memberships', { token: member.session, body: { user_id: admin.userId, role: 'viewer' } });
      assert.equal(mutate.status, 423);
      assert.equal(mutate.json().error.code, 'tenant_suspended');
      assert.equal((await h.call('POST', '/v1/tokens', { token: member.session, body: { name: 'x' } })).status, 423);
      assert.equal((await h.call('GET', '/v1/members', { token: member.session })).status, 200, 'reads continue');
      assert.equal(
        (await h.call('PUT', `/v1/system/orgs/${org}/status`, { token: admin.session, body: { status: 'active' } })).json().status,
        'active',
      );
      assert.equal((await h.call('POST', '/v1/tokens', { token: member.session, body: { name: 'x' } })).status, 201);
      const actions = h.audit.appended.filter((r) => r.tenant === org).map((r) => [r.draft.action, r.draft.meta?.['to']]);
      assert.deepEqual(actions, [
        ['org.create', undefined],
        ['org.region', 'us-east'],
        ['org.status', 'suspended'],
        ['org.status', 'active'],
      ]);
    });

    test(
      "memberships: a superadmin adds by e-mail (a tenant admin cannot pull in another tenant's user), change role, role ceiling both " +
        'ways; audited on the system chain',
      async () => {
        const org = await createOrg(h, admin.session, 'Team');
        const lead = await userWithRole(h, admin.session, org, 'lead@example.test', 'admin');
        const other = await userWithRole(h, admin.session, admin.tenant, 'other@example.test', 'viewer');
        assert.equal(
          (await h.call('POST', '/v1/memberships', { token: lead.session, body: { email: 'other@example.test', role: 'editor' } })).status,
          404,
          "another tenant's user is not found (test/core/system/membership-consent.test.ts)",
        );
        const add = await h.call('POST', '/v1/memberships', {
          token: admin.session,
          tenant: org,
          body: { email: 'other@example.test', role: 'editor' },
        });
        assert.equal(add.status, 201, add.text);
        assert.deepEqual([add.json().tenant, add.json().user_id, add.json().role], [org, other.id, 'editor']);
        const change = await h.call('POST', '/v1/memberships', { token: lead.session, body: { user_id: other.id, role: 'viewer' } });
        assert.equal(change.status, 200);
        assert.equal(
          (await h.call('POST', '/v1/memberships', { token: lead.session, body: { user_id: other.id, role: 'owner' } })).json().error.code,
          'role_ceiling',
        );
        const owner = await userWithRole(h, admin.session, org, 'owner@example.test', 'owner');
        assert.equal(
          (await h.call('POST', '/v1/memberships', { token: lead.session, body: { user_id: owner.id, role: 'viewer' } })).json().error.code,
          'role_ceiling',
          'cannot demote someone above you',
        );
        assert.equal(
          (await h.call('POST', '/v1/memberships', { token: lead.session, body: { email: 'nobody@example.test', role: 'viewer' } })).status,
          404,
        );
        const members = (await h.call('GET', '/v1/members', { token: lead.session })).json();
        assert.deepEqual(members.items.map((m: { email: string; role: string }) => `${m.email}:${m.role}`).sort(), [
          'lead@example.test:admin',
          'other@example.test:viewer',
          'owner@example.test:owner',
        ]);
        const sys = h.audit.appended.filter((r) => r.tenant === SYSTEM_TENANT && r.draft.target_id === other.id).map((r) => r.draft.action);
        assert.deepEqual(sys.slice(-2), ['membership.create', 'membership.update']);
        // Now the user has two tenants: the header is required.
        const who = await h.call('GET', '/v1/members', { token: other.session });
        assert.equal(who.status, 400);
        assert.match(who.json().error.message, /tenant required/);
      },
    );
  });
}
