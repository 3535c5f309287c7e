import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createWorkspace,
  DEFAULT_READ_CAP_BYTES,
  getWorkspace,
  listWorkspaces,
  patchWorkspace,
} from '../../../src/core/workspaces/workspace-service.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

for (const b of await testStores()) {
  describe(`${b.backend}: workspaces`, { skip: b.skip }, () => {
    let h: TestStore;
    let tenant: string;
    before(async () => {
      h = await b.create({ sqliteSynchronous: 'normal' });
      await h.store.migrate();
      tenant = await addTenant(h.store);
    });
    after(async () => h?.dispose());

    it('applies the spec defaults: rw, DLP label, cap 0 meaning 5 MiB, mounted at /workspace', async () => {
      const ws = await createWorkspace(h.store, tenant, { root_path: '/srv/repos/payments' });
      assert.equal(ws.display_name, 'payments');
      assert.equal(ws.mount_mode, 'rw');
      assert.equal(ws.dlp_posture, 'label');
      assert.equal(ws.read_cap_bytes, 0);
      assert.equal(ws.effective_read_cap_bytes, 5 * 1024 * 1024);
      assert.equal(DEFAULT_READ_CAP_BYTES, 5_242_880);
      assert.deepEqual(ws.restricted_subpaths, []);
      assert.equal(ws.mount_target, '/workspace');
      assert.deepEqual(await getWorkspace(h.store, tenant, ws.id), ws);
    });

    it('keeps explicit attributes and merge-patches with optimistic concurrency', async () => {
      const ws = await createWorkspace(h.store, tenant, {
        root_path: '/data/x',
        display_name: 'X',
        mount_mode: 'ro',
        dlp_posture: 'deny',
        read_cap_bytes: 1024,
        restricted_subpaths: ['secrets', 'keys/prod'],
        mount_target: '/mnt/x',
      });
      assert.equal(ws.effective_read_cap_bytes, 1024);
      const { workspace, changed } = await patchWorkspace(h.store, tenant, ws.id, {
        version: 1,
        dlp_posture: 'off',
        restricted_subpaths: ['only-this'],
      });
      assert.equal(workspace.mount_mode, 'ro', 'absent: unchanged');
      assert.equal(workspace.dlp_posture, 'off');
      assert.deepEqual(workspace.restricted_subpaths, ['only-this'], 'lists are replaced whole');
      assert.deepEqual(changed.sort(), ['dlp_posture', 'restricted_subpaths']);
      await assert.rejects(patchWorkspace(h.store, tenant, ws.id, { version: 1, mount_mode: 'rw' }), { code: 'conflict' });
    });

    it('refuses paths that escape: relative roots, .. segments, absolute or dotted subpaths', async () => {
      for (const root_path of ['relative/path', '/a/../b', '/a/', '/a//b']) {
        await assert.rejects(createWorkspace(h.store, tenant, { root_path }), { code: 'bad_request' }, root_path);
      }
      for (const sub of ['/abs', '../up', 'a/../../b', 'a/./b', '']) {
        await assert.rejects(
          createWorkspace(h.store, tenant, { root_path: '/ok', restricted_subpaths: [sub] }),
          { code: 'bad_request' },
          sub,
        );
      }
    });

    it('is confined to its tenant', async () => {
      const ws = await createWorkspace(h.store, tenant, { root_path: '/mine' });
      const other = await addTenant(h.store);
      await assert.rejects(getWorkspace(h.store, other, ws.id), { code: 'not_found' });
      await assert.rejects(patchWorkspace(h.store, other, ws.id, { version: 1, display_name: 'stolen' }), { code: 'not_found' });
      assert.deepEqual((await listWorkspaces(h.store, other, { limit: 50 })).items, []);
    });
  });
}
