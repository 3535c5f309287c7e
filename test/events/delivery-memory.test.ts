/**
 * The delivery engine keeps a bounded amount in memory while a backlog far larger drains: the
 * deliveries it holds (claimed, not attempted), those whose outcome is being written, and the events
 * it keeps read for its lanes stay within what the lanes and the batch allow, on both stores. A
 * count, not RSS: the engine's structures, sampled at every attempt.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventBus } from '../../src/events/bus.js';
import { queueMany } from '../../src/events/delivery/delivery-store.js';
import { DeliveryEngine, type EngineMemory } from '../../src/events/delivery/engine.js';
import type { DeliveryJob, Lane } from '../../src/events/delivery/target.js';
import { eventCatalog } from '../../src/routes.js';
import { newId } from '../../src/store/ids.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { testStores, type TestStore } from '../helpers/stores.js';

const LANES = 4;
const EVENTS = 1_500;
const BATCH = 16;
const CACHED_EVENTS = 200;

for (const b of await testStores()) {
  describe(`${b.backend}: the delivery engine's memory while a backlog drains`, { skip: b.skip }, () => {
    let ts: TestStore;
    const tenant = newId();
    const laneIds = Array.from({ length: LANES }, () => newId());

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      await ts.store.transaction((tx) =>
        tx
          .insertInto('tenants')
          .values({ id: tenant, name: 'mem', region: 'default', status: 'active', created_at: nowTimestamp(), deleted_at: null })
          .execute(),
      );
      const bus = new EventBus({ catalog: eventCatalog() });
      for (let i = 0; i < EVENTS; i += 250) {
        await ts.store.withTenant(tenant, async (tx) => {
          const logged = await bus.record(
            tx,
            Array.from({ length: 250 }, (_, k) => ({
              type: 'agent.created',
              tenant,
              subject: `agent/${newId()}`,
              data: { id: newId(), name: `m${i + k}`, kind: 'agent', external_id: '', status: 'active' },
            })),
          );
          await queueMany(tx, tenant, laneIds.flatMap((laneId) => logged.map((event) => ({ laneId, event }))));
        });
      }
    });
    after(async () => ts?.dispose());

    it('holds at most a few batches per lane and a bounded event cache, whatever the backlog', async () => {
      const got = new Map<string, number[]>(laneIds.map((id) => [id, []]));
      const peak: EngineMemory = { held: 0, writing: 0, events: 0 };
      let engine: DeliveryEngine | undefined;
      const sample = (): void => {
        const m = (engine as DeliveryEngine).memory();
        peak.held = Math.max(peak.held, m.held);
        peak.writing = Math.max(peak.writing, m.writing);
        peak.events = Math.max(peak.events, m.events);
      };
      let total = 0;
      let allDone: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (allDone = resolve));
      const lanes: Lane[] = laneIds.map((id) => ({
        id, tenant, name: id, maxAttempts: 3, initialIntervalS: 1, leaseMs: 30_000, revision: '1',
        target: {
          async send(job: DeliveryJob) {
            sample();
            (got.get(job.laneId) as number[]).push(job.event.sequence ?? 0);
            if (++total === LANES * EVENTS) allDone();
            await new Promise((r) => setImmediate(r));
            return { result: 'delivered' as const, status: 204 };
          },
        },
      }));
      engine = new DeliveryEngine({ store: ts.store, loadLanes: async () => lanes, batch: BATCH, cachedEvents: CACHED_EVENTS });
      await engine.start();
      let timer: NodeJS.Timeout | undefined;
      try {
        const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${total} delivered`)), 120_000)));
        await Promise.race([done, late]);
      } finally {
        clearTimeout(timer);
        await engine.close();
      }
      const all = Array.from({ length: EVENTS }, (_, i) => i + 1);
      for (const [id, seqs] of got) assert.deepEqual(seqs, all, `lane ${id} in order, once each`);
      // A lane holds one claim and writes the outcomes of at most three (the engine waits on the oldest beyond two).
      assert.ok(peak.held <= LANES * BATCH, `held ${peak.held} of a backlog of ${LANES * EVENTS}`);
      assert.ok(peak.writing <= LANES * BATCH * 3, `writing ${peak.writing}`);
      assert.ok(peak.events <= CACHED_EVENTS, `events cached ${peak.events}`);
      assert.ok(peak.held > 0 && peak.events > 0, 'the counts were sampled while deliveries were held');
      const open = await ts.store.withTenant(tenant, (tx) =>
        tx.selectFrom('event_deliveries').select('id').where('tenant_id', '=', tenant).where('status', '!=', 'delivered').execute(),
      );
      assert.equal(open.length, 0, 'every delivery is delivered in the store');
    });
  });
}
