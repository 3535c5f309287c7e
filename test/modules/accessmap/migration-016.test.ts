import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { undoMigration016 } from './undo-migration-010.js';

const AT = '2026-06-01T10:00:00.000000000Z';

// Migration 16: merges no longer test each waiting row against `agents` (an agent's delete folds
// the level first now). A version-15 database may hold rows of agents deleted under the old code,
// which left them waiting for the merge to skip; the migration must remove exactly those, or the
// next merge would bring the deleted agent's edges back.
for (const b of await testStores()) {
  describe(`${b.backend}: migration 16 (accessmap: operations in the recent level)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('a version-15 database keeps the waiting rows of live agents and drops those of agents deleted while they waited', async () => {
      const tenant = await addTenant(h.store);
      const gone = await createAgent(h.store, tenant, { name: 'm16-gone' });
      const kept = await createAgent(h.store, tenant, { name: 'm16-kept' });
      // Enough distinct accesses that the batch waits in the recent level on SQLite.
      const batch = (agent: string): Observation[] =>
        Array.from({ length: 80 }, (_, i) => ({
          origin: { kind: 'agent', id: agent },
          resource: { ref: `m16-res-${i}` },
          mode: 'r',
          confidence: 'high',
          signal_source: 'm16',
          observed_at: AT,
        }));
      await ingestObservations(h.store, tenant, [
        ...batch(gone.id),
        ...batch(kept.id),
        {
          origin: { kind: 'identity', ref: 'm16-ident' },
          resource: { ref: 'm16-res-0' },
          mode: 'rw',
          confidence: 'low',
          signal_source: 'm16',
          observed_at: AT,
        },
      ]);

      await undoMigration016(h, b.backend);
      // What version 15's agent delete did: remove the agent and its merged edges, leave its waiting rows.
      await h.admin.query(
        b.backend === 'sqlite' ? 'delete from access_edges where origin_id = ?' : 'delete from access_edges where origin_id = $1',
        [gone.id],
      );
      await h.admin.query(b.backend === 'sqlite' ? 'delete from agents where id = ?' : 'delete from agents where id = $1', [gone.id]);
      if (b.backend === 'sqlite') {
        const [w] = await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent where origin_id = ?', [gone.id]);
        assert.equal(Number(w?.n), 80, 'the deleted agent\'s rows wait, as version 15 left them');
      }
      await h.store.close();
      const store = await h.reopen();
      assert.deepEqual((await store.migrate()).applied, [16, 17, 18]);

      const edges = (await listEdges(store, tenant, { limit: 1000 })).items;
      assert.equal(edges.filter((e) => e.origin_id === gone.id).length, 0, 'the deleted agent has no edges after the merge');
      assert.equal(edges.filter((e) => e.origin_id === kept.id).length, 80, 'every waiting row of the live agent merged');
      assert.equal(edges.length, 81);
      if (b.backend === 'sqlite') {
        const [w] = await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent');
        assert.equal(Number(w?.n), 0, 'the read folded the level');
        const ok = await h.admin.query<{ integrity_check: string }>('pragma integrity_check');
        assert.deepEqual(ok.map((r) => r.integrity_check), ['ok']);
      }
    });
  });
}
