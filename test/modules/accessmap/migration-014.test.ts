import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { neighbors } from '../../../src/modules/accessmap/neighbors.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { undoMigration014 } from './undo-migration-010.js';

const AT = '2026-06-01T10:00:00.000000000Z';
const obs = (agent: string, ref: string): Observation => ({
  origin: { kind: 'agent', id: agent },
  resource: { ref },
  mode: 'r',
  confidence: 'high',
  signal_source: 'test',
  observed_at: AT,
});

/** Every page of a walk, concatenated. */
async function walkAll<T>(read: (cursor?: string) => Promise<{ items: T[]; has_more: boolean; cursor?: string }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await read(cursor);
    out.push(...page.items);
    if (!page.has_more) return out;
    cursor = page.cursor;
  }
}

// Migration 14 gives every edge `seq` (SQLite: a rowid alias, so the table is built anew) and makes
// the resource index `(resource_no)` on SQLite, `(resource_no, seq)` on Postgres. A version-13
// database must come out with every edge unchanged, numbered in id order, and new edges after them.
for (const b of await testStores()) {
  describe(`${b.backend}: migration 14 (accessmap edge seq)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('a version-13 database keeps every edge, numbers them in id order, and pages a resource by seq through the new index', async () => {
      const tenant = await addTenant(h.store);
      const agents = [];
      for (let i = 0; i < 40; i++) agents.push(await createAgent(h.store, tenant, { name: `m14-${i}` }));
      // 40 agents read `hub`, and each reads five resources of its own.
      for (const a of agents)
        await ingestObservations(h.store, tenant, [
          obs(a.id, 'hub'),
          ...Array.from({ length: 5 }, (_, j) => obs(a.id, `own/${a.name}/${j}`)),
        ]);
      const before14 = await listEdges(h.store, tenant, { limit: 1000 });
      assert.equal(before14.items.length, 240);

      await undoMigration014(h, b.backend);
      await h.store.close();
      const store = await h.reopen();
      assert.deepEqual((await store.migrate()).applied, [14, 15, 16, 17, 18]);

      const after14 = await listEdges(store, tenant, { limit: 1000 });
      assert.deepEqual(after14.items, before14.items, 'every edge, unchanged, in the same id order');
      const bySeq = (
        await h.admin.query<{ id: string; seq: number | string }>(
          `select id, seq from access_edges where tenant_id = '${tenant}' order by seq`,
        )
      ).map((r) => r.id);
      assert.deepEqual(bySeq, [...bySeq].sort(), 'existing edges are numbered in id order (the undo stored them in reverse)');

      const hub = after14.items.find((e) => e.resource_name === 'hub')?.resource_id as string;
      const incoming = await walkAll((cursor) => listEdges(store, tenant, { resource_id: hub, limit: 7, cursor }));
      assert.deepEqual(incoming.map((e) => e.origin_id), agents.map((a) => a.id), "the hub's 40 readers, in the order they were stored");
      const nb = await walkAll((cursor) => neighbors(store, tenant, { id: hub, direction: 'incoming', limit: 9, cursor }));
      assert.deepEqual(nb.map((e) => e.id), incoming.map((e) => e.id));

      // A new edge goes after every existing one, also when the last one was deleted first.
      const top = Number((await h.admin.query<{ m: number | string }>('select max(seq) as m from access_edges'))[0]?.m);
      await h.admin.query(`delete from access_edges where seq = ${top}`);
      const late = await createAgent(store, tenant, { name: 'late' });
      await ingestObservations(store, tenant, [obs(late.id, 'hub')]);
      await listEdges(store, tenant, { limit: 1 }); // folds SQLite's recent level
      const lateSeq = Number(
        (await h.admin.query<{ s: number | string }>(`select seq as s from access_edges where origin_id = '${late.id}'`))[0]?.s,
      );
      assert.ok(lateSeq > top, `a new edge's seq ${lateSeq} comes after the deleted last one (${top}): a seq is never handed out twice`);
      const again = await walkAll((cursor) => listEdges(store, tenant, { resource_id: hub, limit: 7, cursor }));
      assert.equal(again.at(-1)?.origin_id, late.id, 'the new reader is served last');

      if (b.backend === 'sqlite') {
        const cols = (
          await h.admin.query<{ name: string }>(`select name from pragma_index_info('access_edges_resource_idx') order by seqno`)
        ).map((r) => r.name);
        assert.deepEqual(cols, ['resource_no'], 'the resource index holds the number alone (its entries end in the rowid, seq)');
        const plan = (
          await h.admin.query<{ detail: string }>(
            `explain query plan select seq from access_edges where resource_no = 5 and seq > 3 order by seq limit 10`,
          )
        )
          .map((r) => r.detail)
          .join(' | ');
        assert.match(plan, /access_edges_resource_idx/, plan);
        assert.doesNotMatch(plan, /TEMP B-TREE/, `a resource's page needs no sort: ${plan}`);
        const ok = await h.admin.query<{ integrity_check: string }>('pragma integrity_check');
        assert.deepEqual(ok.map((r) => r.integrity_check), ['ok']);
      } else {
        const def =
          (await h.admin.query<{ indexdef: string }>(`select indexdef from pg_indexes where indexname = 'access_edges_resource_idx'`))[0]
            ?.indexdef ?? '';
        assert.match(def, /\(resource_no, seq\) INCLUDE \(tenant_id\)/, def);
      }
      await store.close();
    });
  });
}
