import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { undoMigration017 } from './undo-migration-010.js';

const AT = '2026-06-01T10:00:00.000000000Z';

// Migration 17: the recent level's seq is never handed out twice. A merged-up-to mark compared
// with seqs (the merge worker's, docs/accessmap.md) is only sound if a seq at or below it can never
// name a row that was not merged; with a plain rowid the level starts again at 1 once emptied whole.
for (const b of await testStores()) {
  describe(`${b.backend}: migration 17 (accessmap: the recent level's seq only grows)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('keeps the waiting rows, their seqs and operations, and never hands a seq out again after the level is emptied', async () => {
      const tenant = await addTenant(h.store);
      const agent = await createAgent(h.store, tenant, { name: 'm17' });
      const batch = (tag: string): Observation[] =>
        Array.from({ length: 80 }, (_, i) => ({
          origin: { kind: 'agent', id: agent.id },
          resource: { ref: `m17-${tag}-${i}` },
          mode: 'r',
          confidence: 'high',
          signal_source: 'm17',
          observed_at: AT,
        }));
      await ingestObservations(h.store, tenant, batch('a'));
      // A grant while rows wait is an operation of the level (migration 16).
      await upsertGrants(h.store, tenant, [
        { origin: { kind: 'agent', id: agent.id }, resource: { ref: 'm17-a-0' }, mode: 'rw', source: 'iam' },
      ]);
      await undoMigration017(h, b.backend);
      type Level = { seq: number; id: string };
      const levelBefore = b.backend === 'sqlite' ? await h.admin.query<Level>('select seq, id from access_edges_recent order by seq') : [];
      const opsBefore = b.backend === 'sqlite' ? await h.admin.query('select seq, op from access_edges_recent_ops order by seq') : [];
      if (b.backend === 'sqlite') {
        assert.equal(levelBefore.length, 81, '80 observations and a grant wait');
        assert.deepEqual(opsBefore.map((o) => (o as { op: string }).op), ['grant']);
        const [ddl] = await h.admin.query<{ sql: string }>("select sql from sqlite_master where name = 'access_edges_recent'");
        assert.doesNotMatch(ddl?.sql ?? '', /autoincrement/i, 'version 16 as it was');
      }
      await h.store.close();
      const store = await h.reopen();
      assert.deepEqual((await store.migrate()).applied, [17, 18]);

      if (b.backend === 'sqlite') {
        assert.deepEqual(
          await h.admin.query<Level>('select seq, id from access_edges_recent order by seq'),
          levelBefore,
          'every waiting row kept, with its seq',
        );
        assert.deepEqual(
          await h.admin.query('select seq, op from access_edges_recent_ops order by seq'),
          opsBefore,
          'the operation still marks its row',
        );
      }
      const edges = (await listEdges(store, tenant, { limit: 1000 })).items;
      assert.equal(edges.length, 81, '80 observed edges and the granted one');
      assert.equal(edges.filter((e) => e.permitted).length, 1);
      if (b.backend !== 'sqlite') return;
      const [w] = await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent');
      assert.equal(Number(w?.n), 0, 'the read emptied the level whole');
      const highest = Math.max(...levelBefore.map((r) => r.seq));
      await ingestObservations(store, tenant, batch('b'));
      const [next] = await h.admin.query<{ lo: number }>('select min(seq) as lo from access_edges_recent');
      assert.ok(
        Number(next?.lo) > highest,
        `the first row after the level was emptied has seq ${next?.lo}, above every seq handed out before (${highest})`,
      );
      const ok = await h.admin.query<{ integrity_check: string }>('pragma integrity_check');
      assert.deepEqual(ok.map((r) => r.integrity_check), ['ok']);
    });
  });
}
