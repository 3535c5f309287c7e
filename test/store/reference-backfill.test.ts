/**
 * Migrations 35 and 36 on both stores (src/store/reference-backfill.ts): kill switches and legal
 * holds written before references were resolved, by name or external id, are rewritten to the id
 * of the one record they name; two switches that name the same agent become one; a reference that
 * names nothing or several records, a credential actor, and a kind svc keeps no record of stay as
 * they were. The steps are re-run by taking them out of `schema_migrations`, as a database written
 * by the previous binary would meet them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../src/core/agents/agent-service.js';
import { createWorkspace } from '../../src/core/workspaces/workspace-service.js';
import { newId } from '../../src/store/ids.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { addTenant } from './store-fixtures.js';

for (const b of await testStores()) {
  describe(`${b.backend}: migrations 35 and 36 resolve stored references`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('rewrites what names one record to its id, merges duplicates, and leaves the rest', async () => {
      const tenant = await addTenant(h.store);
      const pay = await createAgent(h.store, tenant, { name: 'payments-copilot', external_id: 'ext-pay' });
      await createAgent(h.store, tenant, { name: 'twin' });
      await createAgent(h.store, tenant, { name: 'twin' });
      const ws = await createWorkspace(h.store, tenant, { root_path: '/srv/held', display_name: 'held-ws' });
      const token = 'token:01900000-0000-7000-8000-00000000000a';
      const at = nowTimestamp();
      const legacy = ['agent:payments-copilot', 'agent:ext-pay', 'agent:twin', 'agent:ghost', `agent:${token}`];
      const holds: Array<[string, string]> = [
        ['agent', 'payments-copilot'],
        ['agent', 'twin'],
        ['workspace', '/srv/held'],
        ['customer', 'ACME-42'],
      ];
      const ids: string[] = [];
      await h.store.withTenant(tenant, async (tx) => {
        for (const scope of legacy)
          await tx
            .insertInto('gov_kill_switches')
            .values({ tenant_id: tenant, scope, reason: '', created_by: 'u', created_at: at })
            .execute();
        for (const [kind, ref] of holds) {
          const id = newId();
          ids.push(id);
          await tx
            .insertInto('cmp_holds')
            .values({
              id, tenant_id: tenant, scope: 'subject', subject_kind: kind, subject_ref: ref, data_class: '', matter: 'm', reason: 'r',
              title: '', on_behalf_of: '', status: 'active', placed_by: 'u', released_by: null, release_approval_id: null,
              released_at: null, created_at: at, updated_at: at,
            })
            .execute();
        }
      });
      await h.admin.query('delete from schema_migrations where version in (35, 36)');
      await h.store.migrate();
      const after = await h.store.withTenant(tenant, async (tx) => ({
        scopes: (await tx.selectFrom('gov_kill_switches').select('scope').where('tenant_id', '=', tenant).execute()).map((r) => r.scope),
        refs: await tx.selectFrom('cmp_holds').select(['id', 'subject_ref']).where('tenant_id', '=', tenant).execute(),
      }));
      assert.deepEqual(after.scopes.sort(), [`agent:${pay.id}`, `agent:${token}`, 'agent:ghost', 'agent:twin'].sort());
      const refOf = (i: number) => after.refs.find((r) => r.id === ids[i])?.subject_ref;
      assert.deepEqual([refOf(0), refOf(1), refOf(2), refOf(3)], [pay.id, 'twin', ws.id, 'ACME-42']);
    });
  });
}
