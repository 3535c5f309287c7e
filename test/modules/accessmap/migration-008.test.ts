import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { storeGraphSource } from '../../../src/modules/accessmap/graph-source.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { undoMigration010 } from './undo-migration-010.js';

const AT = '2026-06-01T10:00:00.000000000Z';
const obs = (agent: string, ref: string, mode: 'r' | 'rw'): Observation => ({
  origin: { kind: 'agent', id: agent },
  resource: { ref },
  mode,
  confidence: 'high',
  signal_source: 'test',
  observed_at: AT,
});

// Migration 8 rebuilds access_edges' key and resource index on Postgres (tenant last) and is empty
// on SQLite. A database written at version 7 must come out with every edge, the same answers, and
// upserts that still fold into one row per access (the conflict target names the rebuilt key).
for (const b of await testStores()) {
  describe(`${b.backend}: migration 8 (accessmap keys)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it(
      'a version-7 database with edges migrates to 8 keeping every edge, and observations still fold into one row per access',
      async () => {
        const tenant = await addTenant(h.store);
        const a = await createAgent(h.store, tenant, { name: 'mig-agent' });
        await ingestObservations(
          h.store,
          tenant,
          Array.from({ length: 300 }, (_, i) => obs(a.id, `mig://r/${i}`, i % 5 === 0 ? 'rw' : 'r')),
        );
        const before8 = await listEdges(h.store, tenant, { origin_id: a.id, limit: 500 });
        assert.equal(before8.items.length, 300);

        // Back to version 9 (before node numbers), then to version 7: the indexes as migration 5
        // made them, and no row for 8.
        await undoMigration010(h, b.backend);
        if (b.backend === 'postgres') {
          await h.admin.query('drop index access_edges_key');
          await h.admin.query('create unique index access_edges_key on access_edges (tenant_id, origin_id, resource_id, mode)');
          await h.admin.query('drop index access_edges_resource_idx');
          await h.admin.query('create index access_edges_resource_idx on access_edges (tenant_id, resource_id, id)');
        }
        // And back from 9 (SQLite's linking-change log; empty on Postgres), which comes again after 8.
        if (b.backend === 'sqlite') {
          for (const t of ['insert', 'update', 'delete']) await h.admin.query(`drop trigger access_nodes_linking_${t}`);
          await h.admin.query('drop table access_linking_changes');
        }
        await h.admin.query('delete from schema_migrations where version between 8 and 18');
        await h.store.close();

        const store = await h.reopen();
        const result = await store.migrate();
        assert.deepEqual(result.applied, [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
        const after8 = await listEdges(store, tenant, { origin_id: a.id, limit: 500 });
        assert.deepEqual(after8.items, before8.items);

        // The same 300 accesses again: counts add on the existing rows, no new edge appears.
        await ingestObservations(
          store,
          tenant,
          Array.from({ length: 300 }, (_, i) => obs(a.id, `mig://r/${i}`, i % 5 === 0 ? 'rw' : 'r')),
        );
        const again = await listEdges(store, tenant, { origin_id: a.id, limit: 500 });
        assert.equal(again.items.length, 300);
        assert.ok(
          again.items.every((e) => e.observed_count === 2),
          'every access observed twice, in one row',
        );
        const reach = await store.withTenant(tenant, (tx) => reachability(storeGraphSource(tx, tenant), a.id));
        assert.equal(reach.total, 300, 'the path search reads every access through the rebuilt key');
        assert.equal(reach.items[0]?.mode, 'rw', 'writable resources rank first');
      },
    );
  });
}
