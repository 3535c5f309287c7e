import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createAgent, listAgents } from '../../../src/core/agents/agent-service.js';
import { ingestObservations } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

let refSeq = 0;
const observe = (h: TestStore, tenant: string, n: number) =>
  ingestObservations(
    h.store,
    tenant,
    Array.from({ length: n }, () => ({ origin: { kind: 'identity' as const, ref: 'walker' }, resource: { ref: `res-${refSeq++}` }, mode: 'r' as const, confidence: 'high' as const, signal_source: 'test' })),
  );

/** Walks every page while `insert(round)` runs concurrently with each page read (finitely many rounds insert); returns ids in served order. */
async function walk(read: (cursor?: string) => Promise<{ items: { id: string }[]; has_more: boolean; cursor?: string }>, insert: (round: number) => Promise<unknown>): Promise<string[]> {
  const served: string[] = [];
  let cursor: string | undefined;
  for (let round = 0; round < 1000; round++) {
    const [page] = await Promise.all([read(cursor), insert(round)]);
    served.push(...page.items.map((i) => i.id));
    if (!page.has_more) return served;
    assert.ok(page.cursor, 'has_more comes with a cursor');
    cursor = page.cursor;
  }
  throw new Error('the walk did not end');
}

function checkWalk(served: string[], present: string[]): void {
  assert.equal(new Set(served).size, served.length, 'no item is served twice');
  assert.deepEqual([...served].sort(), served, 'served in id order');
  const seen = new Set(served);
  for (const id of present) assert.ok(seen.has(id), `item ${id} present for the whole walk was skipped`);
}

for (const b of await testStores()) {
  describe(`${b.backend}: cursors under concurrent inserts (fast-check)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      // Durability is not under test here; NORMAL keeps SQLite commits from waiting on fsync.
      h = await b.create({ sqliteSynchronous: 'normal' });
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('graph pages never skip or repeat an edge while edges are inserted concurrently', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 7 }), fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 8 }), async (initial, limit, inserts) => {
          const tenant = await addTenant(h.store);
          await observe(h, tenant, initial);
          const present = (await listEdges(h.store, tenant, { limit: 1000 })).items.map((e) => e.id);
          const served = await walk(
            (cursor) => listEdges(h.store, tenant, { limit, cursor }),
            (round) => observe(h, tenant, inserts[round] ?? 0),
          );
          checkWalk(served, present);
        }),
        { numRuns: 12 },
      );
    });

    it('agent pages never skip or repeat an agent while agents are created concurrently', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 6 }), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }), async (initial, limit, inserts) => {
          const tenant = await addTenant(h.store);
          for (let i = 0; i < initial; i++) await createAgent(h.store, tenant, { name: `a${i}` });
          const present = (await listAgents(h.store, tenant, { limit: 1000 })).items.map((a) => a.id);
          const served = await walk(
            (cursor) => listAgents(h.store, tenant, { limit, cursor }),
            async (round) => {
              for (let i = 0; i < (inserts[round] ?? 0); i++) await createAgent(h.store, tenant, { name: `late-${round}-${i}` });
            },
          );
          checkWalk(served, present);
        }),
        { numRuns: 10 },
      );
    });

    it('a tampered or foreign cursor is a 400, not a silent restart', async () => {
      const tenant = await addTenant(h.store);
      await assert.rejects(listEdges(h.store, tenant, { limit: 5, cursor: 'not-a-cursor' }), { code: 'bad_request' });
      await assert.rejects(listAgents(h.store, tenant, { limit: 5, cursor: Buffer.from('k1.zzz').toString('base64url') }), { code: 'bad_request' });
    });
  });
}
