import { recordHooks } from '../../../src/routes.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, deleteAgent, getAgent, listAgents, patchAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

for (const b of await testStores()) {
  describe(`${b.backend}: agents`, { skip: b.skip }, () => {
    let h: TestStore;
    let tenant: string;
    before(async () => {
      h = await b.create({ sqliteSynchronous: 'normal' });
      await h.store.migrate();
      tenant = await addTenant(h.store);
    });
    after(async () => h?.dispose());

    it('creates with defaults and reads back what was stored', async () => {
      const a = await createAgent(h.store, tenant, { name: 'coder', labels: { team: 'infra' } });
      assert.equal(a.version, 1);
      assert.equal(a.kind, 'agent');
      assert.equal(a.status, 'active');
      assert.equal(a.external_id, '');
      assert.match(a.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
      assert.deepEqual(await getAgent(h.store, tenant, a.id), a);
    });

    it('PATCH merges: absent fields stay, labels merge key by key and null removes one; version moves by one', async () => {
      const a = await createAgent(h.store, tenant, { name: 'merge-me', kind: 'support', labels: { team: 'infra', tier: 'gold' } });
      const { agent, changed } = await patchAgent(h.store, tenant, a.id, {
        version: 1,
        status: 'paused',
        labels: { tier: null, owner: 'ana' },
      });
      assert.equal(agent.name, 'merge-me', 'name was absent: unchanged');
      assert.equal(agent.kind, 'support');
      assert.equal(agent.status, 'paused');
      assert.deepEqual(agent.labels, { owner: 'ana', team: 'infra' });
      assert.equal(agent.version, 2);
      assert.deepEqual(changed.sort(), ['labels', 'status']);
      assert.deepEqual(await getAgent(h.store, tenant, a.id), agent);
    });

    it('a stale version is a 409 and changes nothing; concurrent patches from one version: exactly one wins', async () => {
      const a = await createAgent(h.store, tenant, { name: 'race' });
      await patchAgent(h.store, tenant, a.id, { version: 1, name: 'race-2' });
      await assert.rejects(patchAgent(h.store, tenant, a.id, { version: 1, name: 'stale' }), { code: 'conflict', status: 409 });
      assert.equal((await getAgent(h.store, tenant, a.id)).name, 'race-2');
      const results = await Promise.allSettled([1, 2, 3, 4].map((i) => patchAgent(h.store, tenant, a.id, { version: 2, name: `w${i}` })));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      assert.ok(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.code === 'conflict'));
      assert.equal((await getAgent(h.store, tenant, a.id)).version, 3);
    });

    it('external_id is unique per tenant (409), free across tenants', async () => {
      await createAgent(h.store, tenant, { name: 'x', external_id: 'ext-1' });
      await assert.rejects(createAgent(h.store, tenant, { name: 'y', external_id: 'ext-1' }), { code: 'conflict' });
      const other = await addTenant(h.store);
      assert.equal((await createAgent(h.store, other, { name: 'y', external_id: 'ext-1' })).external_id, 'ext-1');
    });

    it('delete checks the version, removes the agent and its access edges; another tenant gets 404', async () => {
      const a = await createAgent(h.store, tenant, { name: 'doomed' });
      await ingestObservations(h.store, tenant, [
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 'doomed://r' }, mode: 'r', confidence: 'high', signal_source: 't' },
      ]);
      const other = await addTenant(h.store);
      await assert.rejects(deleteAgent(h.store, recordHooks(), other, a.id), { code: 'not_found' });
      await assert.rejects(deleteAgent(h.store, recordHooks(), tenant, a.id, 7), { code: 'conflict' });
      await deleteAgent(h.store, recordHooks(), tenant, a.id, 1);
      await assert.rejects(getAgent(h.store, tenant, a.id), { code: 'not_found' });
      assert.deepEqual((await listEdges(h.store, tenant, { origin_id: a.id, limit: 10 })).items, []);
    });

    it('lists in creation order with filters and an opaque cursor', async () => {
      const t = await addTenant(h.store);
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await createAgent(h.store, t, { name: `l${i}`, status: i % 2 ? 'paused' : 'active' }));
      const p1 = await listAgents(h.store, t, { limit: 2 });
      assert.deepEqual(p1.items.map((a) => a.name), ['l0', 'l1']);
      assert.equal(p1.has_more, true);
      const p2 = await listAgents(h.store, t, { limit: 2, cursor: p1.cursor });
      const p3 = await listAgents(h.store, t, { limit: 2, cursor: p2.cursor });
      assert.deepEqual([...p2.items, ...p3.items].map((a) => a.name), ['l2', 'l3', 'l4']);
      assert.equal(p3.has_more, false);
      assert.equal(p3.cursor, undefined);
      assert.deepEqual((await listAgents(h.store, t, { limit: 10, status: 'paused' })).items.map((a) => a.name), ['l1', 'l3']);
    });
  });
}
