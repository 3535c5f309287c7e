import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ingestObservations, revokeGrants, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import type { AccessEdge } from '../../../src/modules/accessmap/model.js';
import { mergeThread } from '../../../src/modules/accessmap/merge-thread.js';
import { mergeOnWorker } from '../../../src/modules/accessmap/recent-edges.js';
import { createSqliteTestStore, selectedBackends } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { readAllEdges } from '../../helpers/accessmap.js';

// A low threshold, so that this file's ingest starts merges on the worker while it goes on (read
// once per process, at the first merge decision; node --test runs each file in a process of its own).
process.env['SERVICE_ACCESSMAP_MERGE_ROWS'] = '1000';

const skip = selectedBackends().has('sqlite') ? false : `SVC_TEST_STORES=${process.env['SVC_TEST_STORES']} excludes sqlite`;
const AT = '2026-06-01T10:00:00.000000000Z';
const KEYS = 3_000;

describe('sqlite: merges on the worker thread beside ingest and reads', { skip }, () => {
  it(
    'concurrent ingest streams, grants, revokes and reads while the worker merges: nothing lost, nothing counted twice, no read goes ' +
      'back',
    async () => {
      const h = await createSqliteTestStore();
      try {
        await h.store.migrate();
        const tenant = await addTenant(h.store);
        const expected = new Map<string, number>();
        const batch = (stream: number, round: number): Observation[] =>
          Array.from({ length: 400 }, (_, i) => {
            const k = (stream * 7919 + round * 104729 + i * 31) % KEYS;
            return {
              origin: { kind: 'identity', ref: `w-ident-${k % 50}` },
              resource: { ref: `w-res-${k}` },
              mode: 'r',
              confidence: 'high',
              signal_source: `s${stream}`,
              observed_at: AT,
            };
          });
        const total = (edges: AccessEdge[]): number => edges.reduce((n, e) => n + e.observed_count, 0);
        let lastSeen = 0;
        let reads = 0;
        let ingesting = true;
        const streams = Array.from({ length: 4 }, async (_, stream) => {
          for (let round = 0; round < 15; round++) {
            const b = batch(stream, round);
            await ingestObservations(h.store, tenant, b);
            for (const o of b) expected.set(o.resource.ref as string, (expected.get(o.resource.ref as string) ?? 0) + 1);
          }
        });
        const reader = (async () => {
          while (ingesting) {
            const seen = total(await readAllEdges(h.store, tenant));
            assert.ok(seen >= lastSeen, `a read saw ${seen} observations after one that saw ${lastSeen}`);
            lastSeen = seen;
            reads++;
          }
        })();
        // A grant and its revoke in the middle of it all, on an access nothing observes.
        const grants = (async () => {
          await upsertGrants(h.store, tenant, [
            { origin: { kind: 'identity', ref: 'w-ident-granted' }, resource: { ref: 'w-res-granted' }, mode: 'rw', source: 'iam' },
          ]);
          assert.equal(
            (
              await revokeGrants(h.store, tenant, [
                { origin: { kind: 'identity', ref: 'w-ident-granted' }, resource: { ref: 'w-res-granted' }, mode: 'rw' },
              ])
            ).edges,
            1,
            'the revoke met the grant, applied before it',
          );
        })();
        await Promise.all([...streams, grants]);
        const waiting = Number((await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent'))[0]?.n);
        assert.ok(waiting < 4 * 15 * 400, `merges ran during ingest (${waiting} rows still in the level)`);
        ingesting = false;
        await reader;
        assert.ok(reads > 0);
        const edges = await readAllEdges(h.store, tenant);
        assert.equal(edges.length, expected.size, 'one edge per access, the revoked grant gone');
        const byRes = new Map<string, number>();
        const nodes = await h.admin.query<{ id: string; ref: string }>(
          "select id, ref from access_nodes where kind = 'resource' and tenant_id = ?",
          [tenant],
        );
        const refOf = new Map(nodes.map((n) => [n.id, n.ref]));
        for (const e of edges) byRes.set(refOf.get(e.resource_id) as string, e.observed_count);
        assert.deepEqual(byRes, expected, 'every observation counted once');
        const ok = await h.admin.query<{ integrity_check: string }>('pragma integrity_check');
        assert.deepEqual(
          ok.map((r) => r.integrity_check),
          ['ok'],
        );
      } finally {
        await h.dispose();
      }
    },
  );

  it('a worker thread that dies fails what waits on it, and the next merge starts another: nothing lost', { timeout: 30_000 }, async () => {
    const h = await createSqliteTestStore();
    try {
      await h.store.migrate();
      const tenant = await addTenant(h.store);
      const obs = (tag: string, n: number): Observation[] =>
        Array.from({ length: n }, (_, i) => ({
          origin: { kind: 'identity', ref: `d-ident-${i % 11}` },
          resource: { ref: `d-${tag}-${i}` },
          mode: 'r',
          confidence: 'high',
          signal_source: 'death',
          observed_at: AT,
        }));
      await ingestObservations(h.store, tenant, obs('a', 300));
      assert.equal((await readAllEdges(h.store, tenant)).length, 300);
      const first = mergeThread(h.store)?.thread;
      assert.ok(first, 'the reads started the worker');
      await ingestObservations(h.store, tenant, obs('b', 300));
      // The thread dies with a merge asked of it (sent once it is already stopping, so it is never
      // taken up): the caller gets an error, not a hang.
      const dying = first.terminate();
      const pending = mergeOnWorker(h.store);
      await dying;
      await assert.rejects(pending, /merge worker exited/);
      const edges = await readAllEdges(h.store, tenant);
      assert.equal(edges.length, 600, 'the next read started another worker and merged what waited');
      assert.ok(edges.every((e) => e.observed_count === 1));
      assert.notEqual(mergeThread(h.store)?.thread, first);
    } finally {
      await h.dispose();
    }
  });

  it(
    'a store closes while its worker merges: the merge finishes or rolls back, and a reopened store has every observation once',
    async () => {
      const h = await createSqliteTestStore();
      try {
        await h.store.migrate();
        const tenant = await addTenant(h.store);
        const obs = (i: number): Observation => ({
          origin: { kind: 'identity', ref: `c-ident-${i % 13}` },
          resource: { ref: `c-res-${i}` },
          mode: 'r',
          confidence: 'high',
          signal_source: 'close',
          observed_at: AT,
        });
        // Crossing the threshold starts a merge in the background; close at once.
        await ingestObservations(
          h.store,
          tenant,
          Array.from({ length: 2500 }, (_, i) => obs(i)),
        );
        await h.store.close();
        const store = await h.reopen();
        await store.migrate();
        const edges = await readAllEdges(store, tenant);
        assert.equal(edges.length, 2500);
        assert.ok(edges.every((e) => e.observed_count === 1));
      } finally {
        await h.dispose();
      }
    },
  );
});
