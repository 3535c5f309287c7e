/** Users: create (ceiling, conflict, weak password), list, superadmins, disable/enable with AAL3 and the last-superadmin rule. */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createHarness, identityCounts, login, userWithRole, type Harness } from '../../auth/harness.js';
import { stepUpSession } from '../../../src/auth/assurance.js';
import { formatTimestamp, nowEpochNs } from '../../../src/ledger/time.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';

for (const b of await testStores()) {
  describe(`${b.backend}: users`, { skip: b.skip }, () => {
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

    const stepUp = async (session: string) => {
      const who = (await h.call('GET', '/v1/auth/whoami', { token: session })).json();
      const sessionId = await ts.store.transaction((tx) =>
        tx
          .selectFrom('sessions')
          .select('id')
          .where('user_id', '=', who.user_id)
          .where('revoked_at', 'is', null)
          .orderBy('created_at', 'desc')
          .executeTakeFirstOrThrow(),
      );
      const until = formatTimestamp(nowEpochNs() + 15n * 60n * 1_000_000_000n);
      assert.ok(await stepUpSession(ts.store, sessionId.id, until, { invalidate: () => h.runtime.invalidate() }));
    };

    test(
      'create: 201 with role, audited; duplicates 409; weak 400; above own role 403 role_ceiling; nothing created on refusal',
      async () => {
        const res = await h.call('POST', '/v1/users', {
          token: admin.session,
          body: { email: 'Alice@Example.test', password: 'alice password 1', role: 'admin' },
        });
        assert.equal(res.status, 201, res.text);
        assert.deepEqual([res.json().email, res.json().role, res.json().superadmin], ['alice@example.test', 'admin', false]);
        assert.ok(!('password_hash' in res.json()));
        const rec = h.audit.appended
          .filter((r) => r.tenant === SYSTEM_TENANT)
          .slice(-2)
          .map((r) => r.draft.action);
        assert.deepEqual(rec, ['user.create', 'membership.create']);
        const before = await identityCounts(ts.store);
        assert.equal(
          (
            await h.call('POST', '/v1/users', { token: admin.session, body: { email: 'alice@example.test', password: 'alice password 1' } })
          ).json().error.code,
          'conflict',
        );
        assert.equal(
          (await h.call('POST', '/v1/users', { token: admin.session, body: { email: 'bob@example.test', password: 'short' } })).json().error
            .code,
          'weak_password',
        );
        const alice = await login(h, 'alice@example.test', 'alice password 1');
        const ceiling = await h.call('POST', '/v1/users', {
          token: alice,
          body: { email: 'carol@example.test', password: 'carol password 1', role: 'owner' },
        });
        assert.equal(ceiling.status, 403);
        assert.equal(ceiling.json().error.code, 'role_ceiling');
        const sa = await h.call('POST', '/v1/users', {
          token: alice,
          body: { email: 'carol@example.test', password: 'carol password 1', superadmin: true },
        });
        assert.equal(sa.json().error.code, 'role_ceiling');
        const counts = await identityCounts(ts.store);
        assert.deepEqual({ ...counts, sessions: 0 }, { ...before, sessions: 0 });
      },
    );

    test('list members of the tenant; editors may not (403); superadmins list', async () => {
      const list = (await h.call('GET', '/v1/users', { token: admin.session })).json();
      assert.deepEqual(list.items.map((u: { email: string }) => u.email).sort(), ['alice@example.test', 'root@example.test']);
      const editor = await userWithRole(h, admin.session, admin.tenant, 'ed@example.test', 'editor');
      assert.equal((await h.call('GET', '/v1/users', { token: editor.session })).status, 403);
      assert.equal((await h.call('GET', '/v1/users/superadmins', { token: editor.session })).status, 403);
      const sas = (await h.call('GET', '/v1/users/superadmins', { token: admin.session })).json();
      assert.deepEqual(sas.items.map((u: { id: string }) => u.id), [admin.userId]);
    });

    test('disabling a user kills its sessions and API keys at once; enabling does not revive them', async () => {
      const u = await userWithRole(h, admin.session, admin.tenant, 'dan@example.test', 'viewer');
      const key = (await h.call('POST', '/v1/tokens', { token: u.session, body: { name: 'k' } })).json().token;
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: key })).status, 200);
      const res = await h.call('POST', `/v1/users/${u.id}/disable`, { token: admin.session });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json().status, 'disabled');
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: u.session })).status, 401);
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: key })).status, 401);
      assert.equal(
        (await h.call('POST', '/v1/auth/login', { body: { email: 'dan@example.test', password: 'a long enough password' } })).status,
        401,
      );
      assert.equal((await h.call('POST', `/v1/users/${u.id}/enable`, { token: admin.session })).json().status, 'active');
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: key })).status, 401);
      assert.equal(
        (await h.call('POST', '/v1/auth/login', { body: { email: 'dan@example.test', password: 'a long enough password' } })).status,
        200,
      );
      const actions = h.audit.appended.filter((r) => r.draft.target_id === u.id).map((r) => r.draft.action);
      assert.ok(actions.includes('user.disable') && actions.includes('user.enable'));
      assert.equal((await h.call('POST', `/v1/users/00000000-0000-7000-8000-000000000000/disable`, { token: admin.session })).status, 404);
    });

    test('a superadmin target needs AAL3 (403 step_up_required); the last active superadmin is 409 last_superadmin', async () => {
      const res = await h.call('POST', `/v1/users/${admin.userId}/disable`, { token: admin.session });
      assert.equal(res.status, 403);
      assert.equal(res.json().error.code, 'step_up_required');
      const saKey = (await h.call('POST', '/v1/tokens', { token: admin.session, body: { name: 'sa', superadmin: true } })).json().token;
      assert.equal(
        (await h.call('POST', `/v1/users/${admin.userId}/disable`, { token: saKey })).json().error.code,
        'step_up_required',
        'API keys never reach AAL3',
      );
      await stepUp(admin.session);
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: admin.session })).json().aal, 3);
      const last = await h.call('POST', `/v1/users/${admin.userId}/disable`, { token: admin.session });
      assert.equal(last.status, 409);
      assert.equal(last.json().error.code, 'last_superadmin');
      // With a second superadmin, the first can be disabled.
      const second = await h.call('POST', '/v1/users', {
        token: admin.session,
        body: { email: 'sa2@example.test', password: 'second superadmin', role: 'owner', superadmin: true },
      });
      assert.equal(second.status, 201);
      const s2 = await login(h, 'sa2@example.test', 'second superadmin');
      await stepUp(s2);
      assert.equal((await h.call('POST', `/v1/users/${admin.userId}/disable`, { token: s2 })).status, 200);
      assert.equal((await h.call('POST', `/v1/users/${second.json().id}/disable`, { token: s2 })).json().error.code, 'last_superadmin');
    });
  });
}
