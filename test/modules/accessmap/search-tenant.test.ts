/**
 * Path searches walk edges by node number and name only what they return (docs/accessmap.md
 * "Searches that walk numbers"): the walk trusts that an edge's numbers are its own tenant's nodes,
 * and every name in an answer is read with the tenant checked. This breaks that invariant on
 * purpose (an edge of tenant A whose resource number is tenant B's resource, written around the
 * service) and requires that no answer of A names B's resource, on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../../src/store/ids.js';
import { escalation, reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { storeGraphSource } from '../../../src/modules/accessmap/graph-source.js';
import { nowTimestamp } from '../../../src/ledger/time.js';
import type { Store } from '../../../src/store/store.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant, agentRow } from '../../store/store-fixtures.js';

async function resource(store: Store, tenant: string, name: string, cls = 'data'): Promise<string> {
  const id = newId();
  await store.withTenant(tenant, (tx) =>
    tx
      .insertInto('access_nodes')
      .values({ id, tenant_id: tenant, kind: 'resource', ref: `t://${id}`, name, class: cls, parent_id: null, created_at: nowTimestamp() })
      .execute(),
  );
  return id;
}

function edge(tenant: string, origin: string, res: string, no: number, resNo: number) {
  const now = nowTimestamp();
  return {
    id: newId(),
    tenant_id: tenant,
    origin_kind: 'agent',
    origin_id: origin,
    origin_no: no,
    resource_id: res,
    resource_no: resNo,
    mode: 'rw',
    permitted: 1,
    grant_source: 'iam',
    observed_count: 0,
    first_seen: null,
    last_seen: null,
    confidence: '',
    signal_source: 'test',
    created_at: now,
    updated_at: now,
  };
}

for (const b of await testStores()) {
  describe(`${b.backend}: a path search never names another tenant's resource`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('edges of tenant A that point at tenant B’s resources (by id and number) are walked but never named', async () => {
      const a = await addTenant(h.store);
      const other = await addTenant(h.store);
      const agent = agentRow(a, { name: 'walker' });
      await h.store.withTenant(a, (tx) => tx.insertInto('agents').values(agent).execute());
      const own = await resource(h.store, a, 'own-bucket');
      const foreign = await resource(h.store, other, 'other-tenants-secret');
      const foreignKey = await resource(h.store, other, 'other-tenants-key', 'credential');
      const numbers = new Map(
        (
          await h.admin.query<{ id: string; no: number | string }>(
            `select id, no from agents where id = '${agent.id}' union all select id, no from access_nodes where id in ('${own}', ` +
              `'${foreign}', '${foreignKey}')`,
          )
        ).map((r) => [r.id, Number(r.no)]),
      );
      const no = (id: string) => numbers.get(id) as number;
      await h.store.withTenant(a, (tx) => tx.insertInto('access_edges').values(edge(a, agent.id, own, no(agent.id), no(own))).execute());
      // Around the service: rows of tenant A that point at B's resources, by id and number (the
      // admin connection is not held by row-level security).
      for (const r of [foreign, foreignKey]) {
        const e = edge(a, agent.id, r, no(agent.id), no(r));
        await h.admin.query(
          `insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, permitted, ` +
            `grant_source, observed_count, confidence, signal_source, created_at, updated_at)
           values ('${e.id}', '${a}', 'agent', '${agent.id}', ${e.origin_no}, '${r}', ${e.resource_no}, 'r', 1, 'iam', 0, '', 'test', ` +
             `'${e.created_at}', '${e.updated_at}')`,
        );
      }
      await h.store.withTenant(a, async (tx) => {
        const src = storeGraphSource(tx, a, h.store.sqlite?.handle(tx));
        const reach = await reachability(src, agent.id);
        const text = JSON.stringify(reach);
        assert.ok(!text.includes(foreign) && !text.includes('other-tenants'), 'nothing of tenant B is named');
        assert.deepEqual(
          reach.items.map((i) => i.resource.id),
          [own],
          'the own resource is still reached',
        );
        const esc = JSON.stringify(await escalation(src, agent.id));
        assert.ok(!esc.includes(foreignKey) && !esc.includes('other-tenants'), 'a foreign credential links nobody');
      });
    });
  });
}
