import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { storeGraphSource } from '../../../src/modules/accessmap/graph-source.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

const AT = '2026-06-01T10:00:00.000000000Z';
const obs = (agent: string, ref: string, mode: 'r' | 'rw'): Observation => ({ origin: { kind: 'agent', id: agent }, resource: { ref }, mode, confidence: 'high', signal_source: 'test', observed_at: AT });

/** Undoes migration 9 by hand: access_edges and the recent level as version 8 left them, no numbers. */
const BACK_TO_8 = {
  sqlite: [
    'drop index access_edges_key',
    'drop index access_edges_resource_idx',
    'alter table access_edges drop column origin_no',
    'alter table access_edges drop column resource_no',
    'create unique index access_edges_key on access_edges (tenant_id, origin_id, resource_id, mode)',
    'create index access_edges_resource_idx on access_edges (tenant_id, resource_id, id)',
    'alter table access_edges_recent drop column origin_no',
    'alter table access_edges_recent drop column resource_no',
    'drop table access_node_numbers',
  ],
  postgres: [
    'drop index access_edges_key',
    'drop index access_edges_resource_idx',
    'alter table access_edges drop column origin_no, drop column resource_no',
    'create unique index access_edges_key on access_edges (origin_id, resource_id, mode, tenant_id)',
    'create index access_edges_resource_idx on access_edges (resource_id, id, tenant_id)',
    'drop table access_node_numbers',
  ],
};

// Migration 9 numbers every node an edge names and rebuilds access_edges' key and resource index on
// the numbers. A database written at version 8 must come out with every edge, the same answers,
// numbers in id order, and upserts that still fold into one row per access (the conflict target
// names the rebuilt key). On SQLite, observations waiting in the recent level at the upgrade are
// numbered too and merge into the same rows.
for (const b of await testStores()) {
  describe(`${b.backend}: migration 9 (accessmap node numbers)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('a version-8 database with edges migrates to 9 keeping every edge, numbering nodes in id order, and observations still fold into one row per access', async () => {
      const tenant = await addTenant(h.store);
      const a = await createAgent(h.store, tenant, { name: 'mig-agent' });
      await ingestObservations(h.store, tenant, Array.from({ length: 300 }, (_, i) => obs(a.id, `mig://r/${i}`, i % 5 === 0 ? 'rw' : 'r')));
      const before9 = await listEdges(h.store, tenant, { origin_id: a.id, limit: 500 });
      assert.equal(before9.items.length, 300);

      for (const s of BACK_TO_8[b.backend]) await h.admin.query(s);
      if (b.backend === 'sqlite') {
        // Ten observations committed at version 8 and not yet merged: five repeat existing accesses.
        const edge = before9.items[0] as (typeof before9.items)[number];
        for (let i = 0; i < 10; i++) {
          const resource = i < 5 ? edge.resource_id : (before9.items[i] as (typeof before9.items)[number]).resource_id;
          const mode = i < 5 ? edge.mode : 'rw';
          await h.admin.query(
            `insert into access_edges_recent (id, tenant_id, origin_kind, origin_id, resource_id, mode, observed_count, first_seen, last_seen, confidence, signal_source, recorded_at)
             values (?, ?, 'agent', ?, ?, ?, 1, ?, ?, 'high', 'test', ?)`,
            [`0190a000-0000-7000-8000-${String(i).padStart(12, '0')}`, tenant, a.id, resource, mode, AT, AT, AT],
          );
        }
      }
      await h.admin.query('delete from schema_migrations where version = 9');
      await h.store.close();

      const store = await h.reopen();
      const result = await store.migrate();
      assert.deepEqual(result.applied, [9]);
      const defs = b.backend === 'postgres'
        ? await h.admin.query<{ indexdef: string }>("select indexdef from pg_indexes where tablename = 'access_edges' and indexname in ('access_edges_key', 'access_edges_resource_idx') order by indexname")
        : await h.admin.query<{ indexdef: string }>("select sql as indexdef from sqlite_master where type = 'index' and name in ('access_edges_key', 'access_edges_resource_idx') order by name");
      assert.match(defs[0]?.indexdef ?? '', /UNIQUE INDEX access_edges_key .*\(origin_no, resource_no, mode\)/i);
      assert.match(defs[1]?.indexdef ?? '', /INDEX access_edges_resource_idx .*\(resource_no, id\)/i);

      // Every node the edges name has a number, in id order.
      const numbered = await h.admin.query<{ no: number | string; id: string }>('select no, id from access_node_numbers order by no');
      const ids = [...new Set([a.id, ...before9.items.map((e) => e.resource_id)])].sort();
      assert.deepEqual(numbered.map((r) => r.id), ids);

      const after9 = await listEdges(store, tenant, { origin_id: a.id, limit: 500 });
      if (b.backend === 'postgres') assert.deepEqual(after9.items, before9.items);
      else {
        // The waiting rows merged by the new key: five into the first edge, five as `rw` accesses.
        const fresh = before9.items.slice(5, 10).filter((e) => e.mode === 'r').length;
        assert.ok(fresh > 0 && fresh < 5, 'the fixture mixes new accesses and existing ones');
        assert.equal(after9.items.length, 300 + fresh, 'a waiting rw access on a resource read before is a new edge; one already rw folds into its row');
        const first = after9.items.find((e) => e.id === before9.items[0]?.id);
        assert.equal(first?.observed_count, 6);
      }

      // The same 300 accesses again: counts add on the existing rows, no new edge appears.
      const n = after9.items.length;
      await ingestObservations(store, tenant, Array.from({ length: 300 }, (_, i) => obs(a.id, `mig://r/${i}`, i % 5 === 0 ? 'rw' : 'r')));
      const again = await listEdges(store, tenant, { origin_id: a.id, limit: 500 });
      assert.equal(again.items.length, n);
      const reach = await store.withTenant(tenant, (tx) => reachability(storeGraphSource(tx, tenant), a.id));
      assert.equal(reach.total, 300, 'the path search reads every access through the rebuilt key');
      assert.equal(reach.items[0]?.mode, 'rw', 'writable resources rank first');
    });
  });
}
