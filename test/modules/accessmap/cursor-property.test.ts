import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createAgent, listAgents } from '../../../src/core/agents/agent-service.js';
import { ingestObservations } from '../../../src/modules/accessmap/edge-store.js';
import { listDrift, listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { neighbors } from '../../../src/modules/accessmap/neighbors.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

let refSeq = 0;
const observe = (h: TestStore, tenant: string, n: number) =>
  ingestObservations(
    h.store,
    tenant,
    Array.from({ length: n }, () => ({
      origin: { kind: 'identity' as const, ref: 'walker' },
      resource: { ref: `res-${refSeq++}` },
      mode: 'r' as const,
      confidence: 'high' as const,
      signal_source: 'test',
    })),
  );

/**
 * Walks every page while `insert(round)` runs concurrently with each page read (finitely many rounds insert); returns ids in served order.
 */
async function walk(
  read: (cursor?: string) => Promise<{ items: { id: string }[]; has_more: boolean; cursor?: string }>,
  insert: (round: number) => Promise<unknown>,
): Promise<string[]> {
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

/**
 * `order`: the order a full read gives afterwards (node-seeking pages walk the order edges were stored in, not ids); id order when left
 * out.
 */
function checkWalk(served: string[], present: string[], order?: string[]): void {
  assert.equal(new Set(served).size, served.length, 'no item is served twice');
  if (order === undefined) assert.deepEqual([...served].sort(), served, 'served in id order');
  else assert.deepEqual(served, order.filter((id) => served.includes(id)), 'served in the order a full read gives');
  const seen = new Set(served);
  for (const id of present) assert.ok(seen.has(id), `item ${id} present for the whole walk was skipped`);
}

/** `n` new identities reading the resource `shared`, and the first `again` of them reading it once more (an upsert of an existing edge). */
let readerSeq = 0;
const observeShared = (h: TestStore, tenant: string, n: number, again: number) =>
  ingestObservations(h.store, tenant, [
    ...Array.from({ length: n }, () => ({
      origin: { kind: 'identity' as const, ref: `reader-${readerSeq++}` },
      resource: { ref: 'shared' },
      mode: 'r' as const,
      confidence: 'high' as const,
      signal_source: 'test',
    })),
    ...Array.from({ length: again }, (_, i) => ({
      origin: { kind: 'identity' as const, ref: `reader-${i}` },
      resource: { ref: 'shared' },
      mode: 'r' as const,
      confidence: 'low' as const,
      signal_source: 'again',
    })),
  ]);

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
        fc.asyncProperty(
          fc.integer({ min: 0, max: 30 }),
          fc.integer({ min: 1, max: 7 }),
          fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 8 }),
          async (initial, limit, inserts) => {
            const tenant = await addTenant(h.store);
            await observe(h, tenant, initial);
            const present = (await listEdges(h.store, tenant, { limit: 1000 })).items.map((e) => e.id);
            const served = await walk(
              (cursor) => listEdges(h.store, tenant, { limit, cursor }),
              (round) => observe(h, tenant, inserts[round] ?? 0),
            );
            checkWalk(served, present);
          },
        ),
        { numRuns: 12 },
      );
    });

    it(
      'pages that seek one node (resource filter, drift, neighbours both ways) never skip or repeat an edge while edges are inserted ' +
        'and updated concurrently',
      async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 30 }),
            fc.integer({ min: 1, max: 7 }),
            fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 8 }),
            async (initial, limit, inserts) => {
              const tenant = await addTenant(h.store);
              readerSeq = 0;
              await observeShared(h, tenant, initial, 0);
              const resource = (await listEdges(h.store, tenant, { limit: 1 })).items[0]?.resource_id as string;
              const full = async () => (await listEdges(h.store, tenant, { resource_id: resource, limit: 1000 })).items.map((e) => e.id);
              const present = await full();
              const insert = (round: number) => observeShared(h, tenant, inserts[round] ?? 0, Math.min(readerSeq, 3));
              const byFilter = await walk((cursor) => listEdges(h.store, tenant, { resource_id: resource, limit, cursor }), insert);
              checkWalk(byFilter, present, await full());
              const drift = await walk((cursor) => listDrift(h.store, tenant, { resource_id: resource, limit, cursor }), insert);
              checkWalk(drift, present, await full());
              const nb = await walk((cursor) => neighbors(h.store, tenant, { id: resource, direction: 'both', limit, cursor }), insert);
              checkWalk(nb, present, await full());
            },
          ),
          { numRuns: 10 },
        );
      },
    );

    it('agent pages never skip or repeat an agent while agents are created concurrently', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 20 }),
          fc.integer({ min: 1, max: 6 }),
          fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }),
          async (initial, limit, inserts) => {
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
          },
        ),
        { numRuns: 10 },
      );
    });

    it('a tampered or foreign cursor is a 400, not a silent restart', async () => {
      const tenant = await addTenant(h.store);
      await assert.rejects(listEdges(h.store, tenant, { limit: 5, cursor: 'not-a-cursor' }), { code: 'bad_request' });
      await assert.rejects(listAgents(h.store, tenant, { limit: 5, cursor: Buffer.from('k1.zzz').toString('base64url') }), {
        code: 'bad_request',
      });
      // A cursor of the other order (a node-seeking page walks seq, a tenant page walks ids) is refused too.
      readerSeq = 0;
      await observeShared(h, tenant, 4, 0);
      const tenantPage = await listEdges(h.store, tenant, { limit: 1 });
      const resource = tenantPage.items[0]?.resource_id as string;
      const nodePage = await listEdges(h.store, tenant, { resource_id: resource, limit: 1 });
      assert.ok(tenantPage.cursor && nodePage.cursor);
      await assert.rejects(listEdges(h.store, tenant, { resource_id: resource, limit: 1, cursor: tenantPage.cursor }), {
        code: 'bad_request',
      });
      await assert.rejects(neighbors(h.store, tenant, { id: resource, direction: 'both', limit: 1, cursor: tenantPage.cursor }), {
        code: 'bad_request',
      });
      await assert.rejects(listEdges(h.store, tenant, { limit: 1, cursor: nodePage.cursor }), { code: 'bad_request' });
      for (const bad of ['s1.-1', 's1.01', 's1.1e3', 's1.99999999999999999', 's1.']) {
        await assert.rejects(
          listEdges(h.store, tenant, { resource_id: resource, limit: 1, cursor: Buffer.from(bad).toString('base64url') }),
          { code: 'bad_request' },
          bad,
        );
      }
    });
  });
}
