/** Record hooks: a guard vetoes a delete and nothing changes; cascades run in the owner's transaction. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errors } from '../../src/contract/errors.js';
import { RecordHooks, type RecordHookDecl } from '../../src/contract/record-hooks.js';
import { createAgent, deleteAgent, getAgent } from '../../src/core/agents/agent-service.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { addTenant } from '../store/store-fixtures.js';

for (const b of await testStores()) {
  describe(`${b.backend}: guards and cascades on another module's records`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('a guard refuses the delete: the record stays and no cascade ran', async () => {
      const tenant = await addTenant(h.store);
      const agent = await createAgent(h.store, tenant, { name: 'held' });
      const ran: string[] = [];
      const guard: RecordHookDecl = { action: 'delete', kind: 'agent', phase: 'guard', name: 'test.hold', run: async (c) => {
        ran.push(`guard ${c.id}`);
        if (c.record['name'] === 'held') throw errors.conflict('held by a test hold');
      } };
      const cascade: RecordHookDecl = {
        action: 'delete',
        kind: 'agent',
        phase: 'cascade',
        name: 'test.cascade',
        run: async (c) => void ran.push(`cascade ${c.id}`),
      };
      const hooks = new RecordHooks([cascade, guard]);
      await assert.rejects(deleteAgent(h.store, hooks, tenant, agent.id), /held by a test hold/);
      assert.equal((await getAgent(h.store, tenant, agent.id)).id, agent.id);
      assert.deepEqual(ran, [`guard ${agent.id}`], 'guards run before cascades, and a veto stops the cascades');
      const free = await createAgent(h.store, tenant, { name: 'free' });
      await deleteAgent(h.store, hooks, tenant, free.id);
      assert.deepEqual(ran.slice(1), [`guard ${free.id}`, `cascade ${free.id}`]);
      await assert.rejects(getAgent(h.store, tenant, free.id), { code: 'not_found' });
    });

    it('a cascade that fails rolls the delete back with it', async () => {
      const tenant = await addTenant(h.store);
      const agent = await createAgent(h.store, tenant, { name: 'a' });
      const hooks = new RecordHooks([
        {
          action: 'delete',
          kind: 'agent',
          phase: 'cascade',
          name: 'test.fail',
          run: async () => {
            throw new Error('cascade broke');
          },
        },
      ]);
      await assert.rejects(deleteAgent(h.store, hooks, tenant, agent.id), /cascade broke/);
      assert.equal((await getAgent(h.store, tenant, agent.id)).name, 'a');
    });
  });
}
