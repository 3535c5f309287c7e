/** API keys: issue (secret once), use, list, rotate (old dies in the same transaction), revoke; ceiling; concealment. */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createHarness, createOrg, userWithRole, type Harness } from '../../auth/harness.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';

for (const b of await testStores()) {
  describe(`${b.backend}: tokens`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: Harness;
    let admin: { session: string; userId: string; tenant: string };
    let viewer: { id: string; session: string };
    let editor: { id: string; session: string };
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createHarness(ts.store);
      admin = await bootstrap(h);
      viewer = await userWithRole(h, admin.session, admin.tenant, 'viewer@example.test', 'viewer');
      editor = await userWithRole(h, admin.session, admin.tenant, 'editor@example.test', 'editor');
    });
    after(async () => {
      await h?.dispose();
      await ts?.dispose();
    });

    test('issue → use → list (no secret) → rotate (old 401) → revoke (401); each step audited', async () => {
      const issued = await h.call('POST', '/v1/tokens', { token: editor.session, body: { name: 'ci', role: 'viewer' } });
      assert.equal(issued.status, 201, issued.text);
      const key = issued.json();
      assert.match(key.token, /^svck_[A-Z2-7]{26}_[A-Z2-7]{52}$/);
      assert.deepEqual(
        [key.role, key.tenant, key.superadmin, key.user_id],
        ['viewer', admin.tenant, false, editor.id],
        'bound to the only tenant by default',
      );
      const who = (await h.call('GET', '/v1/auth/whoami', { token: key.token })).json();
      assert.deepEqual([who.kind, who.actor, who.aal, who.grants[0].role], ['token', `token:${key.id}`, undefined, 'viewer']);
      const list = (await h.call('GET', '/v1/tokens', { token: editor.session })).json();
      assert.deepEqual(list.items.map((t: { id: string }) => t.id), [key.id]);
      assert.ok(!JSON.stringify(list).includes(key.token.slice(32)), 'the secret is never listed');

      const rotated = await h.call('POST', `/v1/tokens/${key.id}/rotate`, { token: editor.session });
      assert.equal(rotated.status, 201, rotated.text);
      const next = rotated.json();
      assert.deepEqual([next.name, next.role, next.tenant, next.rotated_from], ['ci', 'viewer', admin.tenant, key.id]);
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: key.token })).status, 401, 'old key dies at once');
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: next.token })).status, 200);
      assert.equal(
        (await h.call('POST', `/v1/tokens/${key.id}/rotate`, { token: editor.session })).status,
        404,
        'a revoked key cannot be rotated again',
      );

      assert.equal((await h.call('DELETE', `/v1/tokens/${next.id}`, { token: editor.session })).status, 204);
      assert.equal((await h.call('GET', '/v1/auth/whoami', { token: next.token })).status, 401);
      const actions = h.audit.appended
        .filter((r) => r.tenant === SYSTEM_TENANT && r.draft.action.startsWith('token.'))
        .map((r) => [r.draft.action, r.draft.actor, r.draft.target_id]);
      assert.deepEqual(actions, [
        ['token.create', `user:${editor.id}`, key.id],
        ['token.rotate', `user:${editor.id}`, next.id],
        ['token.revoke', `user:${editor.id}`, next.id],
      ]);
    });

    test('role ceiling: nobody mints above their own role; superadmin tokens only by superadmins', async () => {
      const up = await h.call('POST', '/v1/tokens', { token: viewer.session, body: { name: 'x', role: 'editor' } });
      assert.equal(up.status, 403);
      assert.equal(up.json().error.code, 'role_ceiling');
      const sa = await h.call('POST', '/v1/tokens', { token: editor.session, body: { name: 'x', superadmin: true } });
      assert.equal(sa.status, 403);
      assert.equal(sa.json().error.code, 'role_ceiling');
      const ok = await h.call('POST', '/v1/tokens', { token: admin.session, body: { name: 'root', superadmin: true } });
      assert.equal(ok.status, 201);
      assert.deepEqual([ok.json().superadmin, ok.json().tenant], [true, null]);
      const who = (await h.call('GET', '/v1/auth/whoami', { token: ok.json().token })).json();
      assert.equal(who.superadmin, true);
      // A viewer key cannot mint an editor key either (its effective role is the ceiling).
      const vkey = (await h.call('POST', '/v1/tokens', { token: editor.session, body: { name: 'v', role: 'viewer' } })).json().token;
      const esc = await h.call('POST', '/v1/tokens', { token: vkey, body: { name: 'e', role: 'editor' } });
      assert.equal(esc.json().error.code, 'role_ceiling');
    });

    test('concealment: a key you cannot manage is 404 for list, revoke and rotate; an admin of its tenant may manage it', async () => {
      const mine = (await h.call('POST', '/v1/tokens', { token: editor.session, body: { name: 'editor-own' } })).json();
      for (const [method, p] of [['DELETE', `/v1/tokens/${mine.id}`], ['POST', `/v1/tokens/${mine.id}/rotate`]] as const) {
        const res = await h.call(method, p, { token: viewer.session });
        assert.equal(res.status, 404, `${method} ${p}`);
        assert.equal(res.json().error.code, 'not_found');
      }
      assert.ok(!(await h.call('GET', '/v1/tokens', { token: viewer.session })).json().items.some((t: { id: string }) => t.id === mine.id));
      assert.equal(
        (await h.call('DELETE', `/v1/tokens/00000000-0000-7000-8000-000000000000`, { token: viewer.session })).status,
        404,
        'unknown ids look the same',
      );
      assert.equal((await h.call('DELETE', `/v1/tokens/${mine.id}`, { token: admin.session })).status, 204);
    });

    test('tenant-bound keys: the header must match (else 403), and they act in that tenant only', async () => {
      const other = await createOrg(h, admin.session, 'Org B');
      const key = (await h.call('POST', '/v1/tokens', { token: admin.session, tenant: admin.tenant, body: { name: 'bound' } })).json();
      assert.equal(key.tenant, admin.tenant);
      const wrong = await h.call('GET', '/v1/members', { token: key.token, tenant: other });
      assert.equal(wrong.status, 403);
      assert.equal((await h.call('GET', '/v1/members', { token: key.token })).status, 200, 'implied tenant');
      assert.equal((await h.call('GET', '/v1/members', { token: key.token, tenant: admin.tenant })).status, 200);
      // Even a superadmin's bound key is confined to its tenant.
      assert.equal((await h.call('POST', '/v1/tokens', { token: key.token, body: { name: 'escape', tenant: other } })).status, 403);
    });

    test('expired keys stop working; expires_at in the past is refused', async () => {
      const past = await h.call('POST', '/v1/tokens', {
        token: admin.session,
        body: { name: 'old', expires_at: '2020-01-01T00:00:00.000000000Z' },
      });
      assert.equal(past.status, 400);
    });
  });
}
