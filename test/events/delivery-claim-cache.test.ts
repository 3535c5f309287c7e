/**
 * A claim takes the events of its deliveries from the engine's shared event cache or reads them,
 * and keeps what it found: an entry evicted meanwhile (by the claim's own reads, or by another
 * lane's while this one awaits) is not an event that "left the log". Under load this once marked
 * live deliveries dead after one attempt (`delivery-memory.test.ts` stalled at 5,984 of 6,000).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventBus } from '../../src/events/bus.js';
import { claimBatch, EventCache } from '../../src/events/delivery/delivery-batch.js';
import { queueMany } from '../../src/events/delivery/delivery-store.js';
import type { BusEvent } from '../../src/events/event-types.js';
import { eventCatalog } from '../../src/routes.js';
import { newId } from '../../src/store/ids.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { testStores, type TestStore } from '../helpers/stores.js';

const EVENTS = 16;

for (const b of await testStores()) {
  describe(`${b.backend}: a claim keeps the events it found`, { skip: b.skip }, () => {
    let ts: TestStore;
    const tenant = newId();
    const lane = newId();
    let logged: BusEvent[] = [];

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      await ts.store.transaction((tx) =>
        tx
          .insertInto('tenants')
          .values({ id: tenant, name: 'claim', region: 'default', status: 'active', created_at: nowTimestamp(), deleted_at: null })
          .execute(),
      );
      const bus = new EventBus({ catalog: eventCatalog() });
      logged = await ts.store.withTenant(tenant, async (tx) => {
        const events = await bus.record(
          tx,
          Array.from({ length: EVENTS }, (_, k) => ({
            type: 'agent.created',
            tenant,
            subject: `agent/${newId()}`,
            data: { id: newId(), name: `c${k}`, kind: 'agent', external_id: '', status: 'active' },
          })),
        );
        await queueMany(tx, tenant, events.map((event) => ({ laneId: lane, event })));
        return events;
      });
    });
    after(async () => ts?.dispose());

    it('half the batch cached, half read: the reads evict the cached half, and every delivery is still claimed live', async () => {
      // A cache of half the batch holding the first half: storing the half it reads evicts the half it had.
      const cache = new EventCache(EVENTS / 2);
      for (const e of logged.slice(0, EVENTS / 2)) cache.set(e);
      const claim = await ts.store.withTenant(tenant, (tx) => claimBatch(tx, tenant, lane, EVENTS, 30_000, cache, false));
      assert.equal(claim.kind, 'claimed');
      if (claim.kind !== 'claimed') return;
      assert.deepEqual(
        claim.items.map((i) => i.event.sequence),
        logged.map((e) => e.sequence),
        'every delivery claimed with its event, in order',
      );
      const dead = await ts.store.withTenant(tenant, (tx) =>
        tx.selectFrom('event_deliveries').select('id').where('tenant_id', '=', tenant).where('status', '=', 'dead').execute(),
      );
      assert.equal(dead.length, 0, 'no delivery was marked dead');
    });
  });
}
