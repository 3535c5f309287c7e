import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { LOOKUPS } from '../../../src/modules/accessmap/node-lookup.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { undoMigration015 } from './undo-migration-010.js';

const AT = '2026-06-01T10:00:00.000000000Z';

// Migration 15 makes the write paths' node lookups index-only: `access_nodes (tenant_id, id, kind,
// no)` and `agents (tenant_id, id, no)` replace the `(tenant_id, id)` indexes. A version-14
// database must come out resolving every node it knew to the same number, and refusing ids it
// does not know, through the new indexes.
for (const b of await testStores()) {
  describe(`${b.backend}: migration 15 (accessmap node lookups from the index)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('a version-14 database resolves its nodes to the same edges afterwards, through indexes that answer the lookups alone', async () => {
      const tenant = await addTenant(h.store);
      const other = await addTenant(h.store);
      const agents = [];
      for (let i = 0; i < 12; i++) agents.push(await createAgent(h.store, tenant, { name: `m15-${i}` }));
      const byRef = (agent: string, ref: string): Observation => ({
        origin: { kind: 'agent', id: agent },
        resource: { ref },
        mode: 'r',
        confidence: 'high',
        signal_source: 'test',
        observed_at: AT,
      });
      for (const a of agents) await ingestObservations(h.store, tenant, [byRef(a.id, 'shared'), byRef(a.id, `own/${a.name}`)]);
      const before15 = await listEdges(h.store, tenant, { limit: 1000 });
      assert.equal(before15.items.length, 24);

      await undoMigration015(h, b.backend);
      await h.store.close();
      const store = await h.reopen();
      assert.deepEqual((await store.migrate()).applied, [15, 16, 17, 18]);

      // The same accesses again, every node named by id: each must resolve to its edge (count 2), none to a new one.
      const again: Observation[] = before15.items.map((e) => ({
        origin: { kind: 'agent', id: e.origin_id },
        resource: { id: e.resource_id },
        mode: 'r',
        confidence: 'high',
        signal_source: 'test',
        observed_at: AT,
      }));
      assert.deepEqual(await ingestObservations(store, tenant, again), { accepted: 24, edges: 24 });
      const after15 = await listEdges(store, tenant, { limit: 1000 });
      assert.deepEqual(
        after15.items.map((e) => [e.id, e.observed_count]),
        before15.items.map((e) => [e.id, 2]),
        'every edge found again, none added',
      );
      // Another tenant's ids stay unknown here, and unknown ids are refused whole.
      const stranger = await createAgent(store, other, { name: 'stranger' });
      await assert.rejects(
        ingestObservations(store, tenant, [{ ...(again[0] as Observation), origin: { kind: 'agent', id: stranger.id } }]),
        { code: 'not_found' },
      );
      await assert.rejects(
        ingestObservations(store, tenant, [{ ...(again[0] as Observation), resource: { id: '00000000-0000-7000-8000-000000000000' } }]),
        { code: 'not_found' },
      );

      if (b.backend === 'sqlite') {
        const plan = async (text: string): Promise<string> =>
          (
            await h.admin.query<{ detail: string }>(
              `explain query plan ${text}`,
              text
                .split('?')
                .slice(1)
                .map(() => '[]'),
            )
          )
            .map((r) => r.detail)
            .join(' | ');
        assert.match(await plan(LOOKUPS.nodesById), /SEARCH n USING COVERING INDEX access_nodes_lookup \(tenant_id=\? AND id=\?\)/);
        assert.match(await plan(LOOKUPS.agentsById), /SEARCH a USING COVERING INDEX agents_lookup \(tenant_id=\? AND id=\?\)/);
        const names = (
          await h.admin.query<{ name: string }>(
            "select name from sqlite_master where type = 'index' and tbl_name in ('agents', 'access_nodes')",
          )
        ).map((r) => r.name);
        assert.ok(
          !names.includes('access_nodes_tenant_id_idx') && !names.includes('agents_tenant_id_idx'),
          `the old indexes are gone: ${names.join(', ')}`,
        );
        const ok = await h.admin.query<{ integrity_check: string }>('pragma integrity_check');
        assert.deepEqual(ok.map((r) => r.integrity_check), ['ok']);
      } else {
        const defs = (
          await h.admin.query<{ indexname: string; indexdef: string }>(
            "select indexname, indexdef from pg_indexes where tablename in ('agents', 'access_nodes') order by indexname",
          )
        ).map((r) => `${r.indexname}: ${r.indexdef.replace(/^.* USING /, '')}`);
        assert.ok(defs.includes('access_nodes_lookup: btree (tenant_id, id) INCLUDE (kind, no)'), defs.join('\n'));
        assert.ok(defs.includes('agents_lookup: btree (tenant_id, id) INCLUDE (no)'), defs.join('\n'));
        assert.ok(!defs.some((d) => d.startsWith('access_nodes_tenant_id_idx') || d.startsWith('agents_tenant_id_idx')), defs.join('\n'));
      }
    });
  });
}
