/**
 * Issue 30 item 5: memberships across tenants. The owner of tenant B cannot add tenant A's owner
 * (or any user who is not yet a member of B) to B: only a superadmin brings an existing user into
 * another tenant. An unknown user and another tenant's user answer the same 404, byte for byte,
 * by id and by e-mail, so the route is no oracle of who exists. A's owner keeps working without a
 * tenant header. Both stores.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createHarness, createOrg, identityCounts, userWithRole, type Harness } from '../../auth/harness.js';

for (const b of await testStores()) {
  describe(`${b.backend}: memberships across tenants`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: Harness;
    let root: { session: string; userId: string; tenant: string };
    let ownerA: { id: string; session: string };
    let ownerB: { id: string; session: string };
    let memberB: { id: string; session: string };
    let tenantB: string;
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createHarness(ts.store);
      root = await bootstrap(h);
      ownerA = await userWithRole(h, root.session, root.tenant, 'alice@a.test', 'owner');
      tenantB = await createOrg(h, root.session, 'Org B');
      ownerB = await userWithRole(h, root.session, tenantB, 'bob@b.test', 'owner');
      memberB = await userWithRole(h, root.session, tenantB, 'carol@b.test', 'viewer');
    });
    after(async () => {
      await h?.dispose();
      await ts?.dispose();
    });

    test("B's owner cannot add A's owner to B; unknown and foreign users answer alike", async () => {
      const before = await identityCounts(ts.store);
      const answers: string[] = [];
      for (const body of [
        { user_id: ownerA.id, role: 'viewer' },
        { user_id: '0190aaaa-0000-7000-8000-0000000000ff', role: 'viewer' },
        { email: 'alice@a.test', role: 'viewer' },
        { email: 'nobody@a.test', role: 'viewer' },
      ]) {
        const res = await h.call('POST', '/v1/memberships', { token: ownerB.session, tenant: tenantB, body });
        assert.equal(res.status, 404, `${JSON.stringify(body)}: ${res.text}`);
        answers.push(res.text);
      }
      assert.equal(new Set(answers).size, 1, `one answer for all: ${answers.join(' | ')}`);
      assert.deepEqual(await identityCounts(ts.store), before, 'nothing was added');
      // A's owner still has one tenant: requests without a header still resolve it.
      const mine = await h.call('GET', '/v1/members', { token: ownerA.session });
      assert.equal(mine.status, 200, mine.text);
    });

    test("B's owner still changes the roles of B's members; a superadmin adds a user across tenants", async () => {
      const change = await h.call('POST', '/v1/memberships', {
        token: ownerB.session,
        tenant: tenantB,
        body: { user_id: memberB.id, role: 'editor' },
      });
      assert.equal(change.status, 200, change.text);
      assert.equal(change.json().role, 'editor');
      const add = await h.call('POST', '/v1/memberships', {
        token: root.session,
        tenant: tenantB,
        body: { user_id: ownerA.id, role: 'viewer' },
      });
      assert.equal(add.status, 201, add.text);
      // Once a member, B's owner manages that membership like any other.
      assert.equal(
        (
          await h.call('POST', '/v1/memberships', {
            token: ownerB.session,
            tenant: tenantB,
            body: { email: 'alice@a.test', role: 'editor' },
          })
        ).status,
        200,
      );
    });
  });
}
