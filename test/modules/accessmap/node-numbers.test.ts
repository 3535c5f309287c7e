/**
 * Node numbers (migration 9): every node an edge names has one, assigned on first use; a number
 * is never handed to another node, not even after its node is deleted; and a number is looked up
 * under its tenant only, so an id of another tenant names no edges.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, deleteAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { neighbors } from '../../../src/modules/accessmap/neighbors.js';
import { knownNumbers, nodeNumbers } from '../../../src/modules/accessmap/node-numbers.js';
import { foldedGraphSource } from '../../../src/modules/accessmap/graph-source.js';
import { reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

const AT = '2026-06-01T10:00:00.000000000Z';
const obs = (agent: string, ref: string): Observation => ({ origin: { kind: 'agent', id: agent }, resource: { ref }, mode: 'r', confidence: 'high', signal_source: 'test', observed_at: AT });

for (const b of await testStores()) {
  describe(`${b.backend}: accessmap node numbers`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    const numbers = (tenant: string, ids: string[]) => h.store.withTenant(tenant, (tx) => knownNumbers(tx, h.store.sqliteHandle?.(tx), tenant, ids));
    const maxNumber = async () => Number((await h.admin.query<{ m: number | string }>('select max(no) as m from access_node_numbers'))[0]?.m ?? 0);

    it('numbers come with the first edge, in id order within a batch, and a deleted node keeps its number for good', async () => {
      const tenant = await addTenant(h.store);
      const a = await createAgent(h.store, tenant, { name: 'numbered' });
      assert.equal((await numbers(tenant, [a.id])).size, 0, 'an agent without edges has no number');
      await ingestObservations(h.store, tenant, [obs(a.id, 'num://1'), obs(a.id, 'num://2')]);
      const page = await listEdges(h.store, tenant, { origin_id: a.id, limit: 10 });
      const ids = [a.id, ...page.items.map((e) => e.resource_id)];
      const no = await numbers(tenant, ids);
      assert.equal(no.size, 3);
      const byId = [...ids].sort().map((id) => no.get(id) as number);
      assert.deepEqual(byId, [...byId].sort((x, y) => x - y), 'a batch numbers its new nodes in id order');

      const aNo = no.get(a.id) as number;
      const top = await maxNumber();
      await deleteAgent(h.store, tenant, a.id);
      assert.equal((await listEdges(h.store, tenant, { origin_id: a.id, limit: 10 })).items.length, 0, 'the agent’s edges went with it');
      assert.equal((await numbers(tenant, [a.id])).get(a.id), aNo, 'its number stays taken');

      const b2 = await createAgent(h.store, tenant, { name: 'next' });
      await ingestObservations(h.store, tenant, [obs(b2.id, 'num://1')]);
      const bNo = (await numbers(tenant, [b2.id])).get(b2.id) as number;
      assert.ok(bNo > top, `a new node gets a number never used before (${bNo} > ${top})`);
      // Assigning again is a lookup: the same numbers, no new rows.
      const again = await h.store.withTenant(tenant, (tx) => nodeNumbers(tx, h.store.sqliteHandle?.(tx), tenant, [b2.id, a.id]));
      assert.deepEqual([again.get(b2.id), again.get(a.id)], [bNo, aNo]);
      assert.equal(await maxNumber(), bNo, 'looking numbers up again assigned none');
    });

    it('a number is looked up under its tenant: another tenant’s node id names no edge there', async () => {
      const [t1, t2] = [await addTenant(h.store), await addTenant(h.store)];
      const a1 = await createAgent(h.store, t1, { name: 'one' });
      const a2 = await createAgent(h.store, t2, { name: 'two' });
      await ingestObservations(h.store, t1, [obs(a1.id, 'shared://x'), obs(a1.id, 'shared://y')]);
      await ingestObservations(h.store, t2, [obs(a2.id, 'shared://x')]);
      await upsertGrants(h.store, t2, [{ origin: { kind: 'agent', id: a2.id }, resource: { ref: 'shared://z' }, mode: 'rw', source: 'iam' }]);
      assert.equal((await numbers(t2, [a1.id])).size, 0);
      assert.equal((await listEdges(h.store, t1, { origin_id: a1.id, limit: 10 })).items.length, 2);
      assert.equal((await listEdges(h.store, t2, { origin_id: a1.id, limit: 10 })).items.length, 0);
      const r1 = (await listEdges(h.store, t1, { origin_id: a1.id, limit: 10 })).items[0]?.resource_id as string;
      assert.equal((await listEdges(h.store, t2, { resource_id: r1, limit: 10 })).items.length, 0);
      assert.equal((await listEdges(h.store, t2, { limit: 10 })).items.length, 2);
      const reach = await h.store.withTenant(t2, async (tx) => reachability(await foldedGraphSource(h.store, tx, t2), a1.id));
      assert.equal(reach.items.length, 0);
      const n2 = await neighbors(h.store, t2, { id: a2.id, direction: 'both', limit: 10 });
      assert.equal(n2.items.length, 2);
      assert.ok(n2.items.every((e) => e.origin_id === a2.id));
    });
  });
}
