/** The in-process bus: only committed changes are announced, per-tenant commit order, slow subscribers isolated, bounded queues. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { Type } from 'typebox';
import { EventBus } from '../../src/events/bus.js';
import { EventCatalog, type BusEvent } from '../../src/events/event-types.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { addTenant, agentRow } from '../store/store-fixtures.js';

const catalog = () =>
  new EventCatalog([
    {
      type: 'agent.created',
      source: '/svc/agents',
      permission: 'agent:read',
      description: 'x',
      stability: 'beta',
      schema: Type.Object({}),
    },
    {
      type: 'thing.happened',
      source: '/svc/test',
      permission: 'agent:read',
      description: 'x',
      stability: 'beta',
      schema: Type.Object({}),
      durable: false,
    },
  ]);

for (const b of await testStores()) {
  describe(`${b.backend}: bus events follow commits`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('an event staged inside a rolled-back transaction is never delivered; a committed one is', async () => {
      const bus = new EventBus({ catalog: catalog() });
      const seen: BusEvent[] = [];
      bus.subscribe({ name: 't', types: '*' }, (e) => void seen.push(e));
      const tenant = await addTenant(h.store);
      const row = agentRow(tenant);
      await assert.rejects(
        bus.withEvents((emit) =>
          h.store.withTenant(tenant, async (tx) => {
            await tx.insertInto('agents').values(row).execute();
            await emit({ type: 'agent.created', tenant, subject: `agent/${row.id}`, data: { id: row.id } }, tx);
            throw new Error('handler failed after the insert');
          }),
        ),
        /handler failed/,
      );
      const kept = await h.store.withTenant(tenant, (tx) => tx.selectFrom('agents').select('id').where('id', '=', row.id).execute());
      assert.equal(kept.length, 0, 'the insert rolled back');
      const logged = await h.store.withTenant(tenant, (tx) =>
        tx.selectFrom('events').select('subject').where('tenant_id', '=', tenant).execute(),
      );
      assert.deepEqual(logged, [], 'its event rolled back with it');
      const row2 = agentRow(tenant);
      await bus.withEvents((emit) =>
        h.store.withTenant(tenant, async (tx) => {
          await tx.insertInto('agents').values(row2).execute();
          await emit({ type: 'agent.created', tenant, subject: `agent/${row2.id}`, data: { id: row2.id } }, tx);
        }),
      );
      await bus.idle();
      assert.deepEqual(seen.map((e) => e.data['id']), [row2.id]);
      assert.equal(seen[0]?.source, '/svc/agents');
      assert.match(seen[0]?.id ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    });
  });
}

describe('bus delivery', () => {
  it('subscribers see events in commit order per tenant, with ids increasing', async () => {
    const bus = new EventBus({ catalog: catalog() });
    const seen = new Map<string, number[]>();
    bus.subscribe({ name: 'order', types: ['thing.happened'] }, async (e) => {
      // An uneven handler: order must hold anyway.
      if ((e.data['n'] as number) % 7 === 0) await new Promise((r) => setTimeout(r, 2));
      const list = seen.get(e.tenant) ?? [];
      list.push(e.data['n'] as number);
      seen.set(e.tenant, list);
    });
    for (let n = 0; n < 300; n++) bus.publish([{ type: 'thing.happened', tenant: `t${n % 3}`, subject: `x/${n}`, data: { n } }]);
    await bus.idle();
    for (const [, list] of seen) assert.deepEqual(list, [...list].sort((a, b) => a - b));
    assert.equal([...seen.values()].reduce((s, l) => s + l.length, 0), 300);
  });

  it('a slow subscriber cannot block the publisher or other subscribers', async () => {
    const bus = new EventBus({ catalog: catalog() });
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    bus.subscribe({ name: 'slow', types: '*' }, () => stuck);
    const fast: number[] = [];
    bus.subscribe({ name: 'fast', types: '*' }, (e) => void fast.push(e.data['n'] as number));
    const t0 = performance.now();
    for (let n = 0; n < 100; n++) bus.publish([{ type: 'thing.happened', tenant: 't', subject: 'x/1', data: { n } }]);
    assert.ok(performance.now() - t0 < 50, 'publish returned at once');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(fast.length, 100, 'the fast subscriber got every event while the slow one was stuck');
    release();
    await bus.idle();
  });

  it('a full queue drops, counts the drop in the metric, and never grows past its bound', async () => {
    const registry = new Registry();
    const bus = new EventBus({ catalog: catalog(), registry });
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    bus.subscribe({ name: 'tiny', types: '*', queueLimit: 5 }, () => stuck);
    for (let n = 0; n < 20; n++) bus.publish([{ type: 'thing.happened', tenant: 't', subject: 'x/1', data: { n } }]);
    const s = bus.stats().subscribers[0];
    assert.ok(s && s.depth <= 5);
    assert.ok(s && s.dropped >= 14);
    assert.match(await registry.metrics(), /svc_bus_dropped_total\{subscriber="tiny"\} 1[45]/);
    release();
    await bus.idle();
  });

  it('publishing an undeclared type is a programming error, refused', () => {
    const bus = new EventBus({ catalog: catalog() });
    assert.throws(() => bus.publish([{ type: 'nobody.declared', tenant: 't', subject: 'x/1', data: {} }]), /not declared/);
  });

  it('a durable type published without its transaction is refused (it would never reach the log), with or without withEvents', async () => {
    const bus = new EventBus({ catalog: catalog() });
    const seen: BusEvent[] = [];
    bus.subscribe({ name: 't', types: '*' }, (e) => void seen.push(e));
    const created = { type: 'agent.created', tenant: 't', subject: 'agent/1', data: { id: '1' } };
    assert.throws(() => bus.publish([created]), /agent\.created is durable/);
    await assert.rejects(
      bus.withEvents(async (emit) => emit({ type: 'agent.created', tenant: 't', subject: 'agent/1', data: { id: '1' } })),
      /agent\.created is durable/,
    );
    await bus.idle();
    assert.deepEqual(seen, []);
  });
});
