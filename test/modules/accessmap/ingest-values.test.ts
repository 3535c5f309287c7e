import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

// Postgres ingests a batch as arrays (unnest), which the driver writes as array literals: text
// that looks like array syntax or SQL NULL must come back as it went in, on every backend.
const AWKWARD = [
  'NULL',
  'null',
  '',
  'a,b',
  '{x,y}',
  'quote " inside',
  "apostrophe ' inside",
  'back\\slash',
  'tab\tnewline\n',
  'ünïcödé ✓ 𝄞',
  ' padded ',
];

for (const b of await testStores()) {
  describe(`${b.backend}: observation values`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('signal sources and resource refs with array syntax, quotes, NULL spelled out and unicode come back byte for byte', async () => {
      const tenant = await addTenant(h.store);
      const a = await createAgent(h.store, tenant, { name: 'values-agent' });
      // 70 observations, so SQLite takes the recent level too (64 or more edges), not only the direct upsert.
      const batch = Array.from({ length: 70 }, (_, i) => ({
        origin: { kind: 'agent' as const, id: a.id },
        resource: { ref: `ref ${AWKWARD[i % AWKWARD.length]} #${i}` },
        mode: 'r' as const,
        confidence: 'high' as const,
        signal_source: AWKWARD[i % AWKWARD.length] as string,
        observed_at: '2026-06-01T10:00:00.000000000Z',
      }));
      await ingestObservations(h.store, tenant, batch);
      const page = await listEdges(h.store, tenant, { origin_id: a.id, limit: 100 });
      assert.equal(page.items.length, 70);
      const got = new Map(page.items.map((e) => [e.resource_name, e.signal_source]));
      for (const o of batch) assert.equal(got.get(o.resource.ref), o.signal_source, `signal source of ${JSON.stringify(o.resource.ref)}`);
    });

    it('a batch that interleaves origin kinds and names one resource many times resolves each observation to its own origin', async () => {
      const tenant = await addTenant(h.store);
      const a = await createAgent(h.store, tenant, { name: 'kinds-agent' });
      const kinds = [
        { origin: { kind: 'agent' as const, id: a.id }, times: 40 },
        { origin: { kind: 'session' as const, ref: 'sess/kinds' }, times: 30 },
        { origin: { kind: 'identity' as const, ref: 'svc-account' }, times: 25 },
      ];
      // Round robin, so no kind's observations sit together in the batch: 40 + 30 + 25.
      const batch = [];
      for (let i = 0; i < 40; i++) {
        for (const k of kinds)
          if (i < k.times)
            batch.push({
              origin: k.origin,
              resource: { ref: 'etc/hot.conf' },
              mode: 'r' as const,
              confidence: 'high' as const,
              signal_source: 'kinds',
              observed_at: '2026-06-01T10:00:00.000000000Z',
            });
      }
      assert.deepEqual(await ingestObservations(h.store, tenant, batch), { accepted: 95, edges: 3 });
      const page = await listEdges(h.store, tenant, { limit: 10 });
      assert.deepEqual(
        page.items.map((e) => [e.origin_kind, e.resource_name, e.observed_count]).sort(),
        [['agent', 'etc/hot.conf', 40], ['identity', 'etc/hot.conf', 25], ['session', 'etc/hot.conf', 30]],
      );
      assert.equal(page.items.find((e) => e.origin_kind === 'agent')?.origin_id, a.id);
      // A kind outside the model is refused whole, as a client error, with nothing stored.
      const bad = [batch[0], { ...batch[1], origin: { kind: 'robot', ref: 'r2' } }] as unknown as typeof batch;
      await assert.rejects(ingestObservations(h.store, tenant, bad), { code: 'bad_request' });
      assert.deepEqual(
        (await listEdges(h.store, tenant, { limit: 10 })).items.map((e) => e.observed_count).sort(),
        page.items.map((e) => e.observed_count).sort(),
      );
    });
  });
}
