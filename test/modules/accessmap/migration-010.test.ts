import { recordHooks } from '../../../src/routes.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, deleteAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listDrift, listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { withFoldedGraph } from '../../../src/modules/accessmap/graph-source.js';
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
const many = (agent: string, n: number, prefix = 'mig://r/'): Observation[] =>
  Array.from({ length: n }, (_, i) => obs(agent, `${prefix}${i}`, i % 5 === 0 ? 'rw' : 'r'));

// Migration 10 numbers every node and edge of a database written before it, rows still waiting in
// SQLite's recent level included, and moves the edge key onto the numbers. What was stored reads the
// same afterwards, later writes meet the old rows in one row per access, and numbers are never
// handed out twice nor changed.
for (const b of await testStores()) {
  describe(`${b.backend}: migration 10 (node numbers)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('numbers the nodes and edges of a version-9 database; reads, folds, deletes and new nodes work on the numbers', async () => {
      const tenant = await addTenant(h.store);
      const other = await addTenant(h.store);
      const a = await createAgent(h.store, tenant, { name: 'mig-a' });
      const gone = await createAgent(h.store, tenant, { name: 'mig-gone' });
      const stranger = await createAgent(h.store, other, { name: 'other-tenant' });
      await ingestObservations(h.store, tenant, many(a.id, 300));
      await ingestObservations(h.store, tenant, many(gone.id, 80));
      await ingestObservations(h.store, other, many(stranger.id, 50));
      // Grants: one covering an observed access, one never used.
      await upsertGrants(h.store, tenant, [
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 'mig://r/1' }, mode: 'r', source: 'iam' },
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 'mig://unused' }, mode: 'rw', source: 'iam' },
      ]);
      const driftBefore = await listDrift(h.store, tenant, { limit: 1000 });
      // The same 200 accesses once more, after the last read: on SQLite they wait in the recent level
      // (200 rows, more than a direct write takes, fewer than a merge) while the schema changes.
      await ingestObservations(h.store, tenant, many(a.id, 200));
      if (b.backend === 'sqlite')
        assert.equal(Number((await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent'))[0]?.n), 200);

      await undoMigration010(h, b.backend);
      await h.store.close();
      const store = await h.reopen();
      assert.deepEqual((await store.migrate()).applied, [10, 11, 12, 13, 14, 15, 16, 17, 18]);
      if (b.backend === 'sqlite') {
        const cover = await h.admin.query("select name from sqlite_master where type = 'index' and name = 'access_nodes_no_cover'");
        assert.deepEqual(cover, [], 'migration 12 drops the index 11 added');
      }

      // Every node has a number of its own; every edge carries its ends' numbers.
      const nodes = await h.admin.query<{ no: number | string | null }>('select no from agents union all select no from access_nodes');
      assert.ok(nodes.every((n) => n.no !== null));
      assert.equal(new Set(nodes.map((n) => Number(n.no))).size, nodes.length, 'numbers are distinct across agents and nodes');
      const top = Math.max(...nodes.map((n) => Number(n.no)));
      if (b.backend === 'sqlite')
        assert.equal(Number((await h.admin.query<{ last: number }>('select last from access_node_counter'))[0]?.last), top);
      const wrong = await h.admin.query<{ n: number | string }>(`
        select count(*) as n from access_edges e
        where e.origin_no is distinct from coalesce((select no from agents x where x.id = e.origin_id), (select no from access_nodes x ` +
          `where x.id = e.origin_id))
           or e.resource_no is distinct from (select no from access_nodes x where x.id = e.resource_id)`);
      assert.equal(Number(wrong[0]?.n), 0, 'each edge names its ends by their numbers');

      // The waiting rows fold onto the numbered rows: 300 accesses, the first 200 seen twice.
      const edges = await listEdges(store, tenant, { origin_id: a.id, limit: 1000 });
      assert.equal(edges.items.length, 301, '300 observed accesses and the unused grant');
      const count = new Map(edges.items.map((e) => [e.resource_name, e.observed_count]));
      assert.equal(count.get('mig://r/0'), 2);
      assert.equal(count.get('mig://r/199'), 2);
      assert.equal(count.get('mig://r/200'), 1);
      assert.equal(count.get('mig://unused'), 0);
      const driftAfter = await listDrift(store, tenant, { limit: 1000 });
      assert.deepEqual(
        driftAfter.items.map((d) => [d.id, d.drift, d.drift_confidence]),
        driftBefore.items.map((d) => [d.id, d.drift, d.drift_confidence]),
        'drift pairs the same grants and observations',
      );
      const reach = await withFoldedGraph(store, tenant, (g) => reachability(g, a.id));
      assert.equal(reach.total, 301, 'the path search walks the numbered key');
      assert.equal(
        (await listEdges(store, other, { limit: 1000 })).items.length,
        50,
        'the other tenant keeps its edges and sees no others',
      );

      // New nodes take numbers above every existing one; the same accesses still fold into one row.
      await ingestObservations(store, tenant, [...many(a.id, 10), obs(a.id, 'mig://new', 'r')]);
      const fresh = await h.admin.query<{ no: number | string }>("select no from access_nodes where ref = 'mig://new'");
      assert.ok(Number(fresh[0]?.no) > top, 'a new resource is numbered above every existing node');
      const later = await createAgent(store, tenant, { name: 'mig-later' });
      const laterNo = await h.admin.query<{ no: number | string | null }>(`select no from agents where id = '${later.id}'`);
      assert.ok(Number(laterNo[0]?.no) > Number(fresh[0]?.no), 'an agent created through the API is numbered too');
      const after10 = await listEdges(store, tenant, { origin_id: a.id, limit: 1000 });
      assert.equal(after10.items.length, 302);
      assert.equal(after10.items.find((e) => e.resource_name === 'mig://r/3')?.observed_count, 3);

      // A number never changes.
      await assert.rejects(h.admin.query(`update agents set no = no + 1000000 where id = '${a.id}'`), /a node number never changes/);

      // Deleting an agent removes its edges, found by its number.
      await deleteAgent(store, recordHooks(), tenant, gone.id);
      assert.equal((await listEdges(store, tenant, { origin_id: gone.id, limit: 1000 })).items.length, 0);
      assert.equal(
        Number((await h.admin.query<{ n: number }>(`select count(*) as n from access_edges where origin_id = '${gone.id}'`))[0]?.n),
        0,
      );
    });
  });
}
