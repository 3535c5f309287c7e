/**
 * The linking set's memory cap (`SERVICE_ACCESSMAP_LINKING_IDS`, here 3 ids per connection): a
 * tenant with more linking resources than the cap is searched with the index probe and answers the
 * same; tenants that do not fit together take turns. Its own file: the cap is read once per process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../../src/store/ids.js';
import { memoryGraphSource, storeGraphSource, type GraphEdge, type GraphNode } from '../../../src/modules/accessmap/graph-source.js';
import { reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { linkingNodes } from '../../../src/modules/accessmap/linking-set.js';
import { nowTimestamp } from '../../../src/ledger/time.js';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { addTenant, agentRow, nodeNo } from '../../store/store-fixtures.js';

process.env['SERVICE_ACCESSMAP_LINKING_IDS'] = '3';

/** A chain agent →rw config_1 ← identity_1 →rw config_2 ← identity_2 … each identity reading the config before it: every config links. */
async function chain(h: TestStore, tenant: string, n: number): Promise<{ agent: string; nodes: GraphNode[]; edges: GraphEdge[] }> {
  const now = nowTimestamp();
  const agent = newId();
  const nodes: GraphNode[] = [{ id: agent, kind: 'agent', name: 'a', class: null, parent_id: null }];
  const edges: GraphEdge[] = [];
  let writer = { id: agent, kind: 'agent' as 'agent' | 'identity' };
  for (let i = 0; i < n; i++) {
    const config = newId();
    const identity = newId();
    nodes.push(
      { id: config, kind: 'resource', name: `c${i}`, class: 'config', parent_id: null },
      { id: identity, kind: 'identity', name: `i${i}`, class: null, parent_id: null },
    );
    edges.push({
      id: newId(),
      origin_kind: writer.kind,
      origin_id: writer.id,
      resource_id: config,
      mode: 'rw',
      permitted: true,
      observed: false,
      confidence: null,
    });
    edges.push({
      id: newId(),
      origin_kind: 'identity',
      origin_id: identity,
      resource_id: config,
      mode: 'r',
      permitted: true,
      observed: false,
      confidence: null,
    });
    writer = { id: identity, kind: 'identity' };
  }
  await h.store.withTenant(tenant, async (tx) => {
    await tx.insertInto('agents').values(agentRow(tenant, { id: agent, name: 'a' })).execute();
    await tx
      .insertInto('access_nodes')
      .values(
        nodes
          .filter((x) => x.kind !== 'agent')
          .map((x) => ({
            id: x.id,
            tenant_id: tenant,
            kind: x.kind as 'resource' | 'identity',
            ref: x.id,
            name: x.name,
            class: x.class ?? '',
            parent_id: null,
            created_at: now,
          })),
      )
      .execute();
    await tx
      .insertInto('access_edges')
      .values(
        edges.map((e) => ({
          id: e.id,
          tenant_id: tenant,
          origin_kind: e.origin_kind,
          origin_id: e.origin_id,
          origin_no: nodeNo(e.origin_id),
          resource_id: e.resource_id,
          resource_no: nodeNo(e.resource_id),
          mode: e.mode,
          permitted: 1,
          grant_source: 'iam',
          observed_count: 0,
          first_seen: null,
          last_seen: null,
          confidence: '',
          signal_source: '',
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  });
  return { agent, nodes, edges };
}

describe('sqlite: the linking set within SERVICE_ACCESSMAP_LINKING_IDS=3', () => {
  let h: TestStore;
  before(async () => {
    h = await createSqliteTestStore();
    await h.store.migrate();
  });
  after(async () => h?.dispose());

  const search = (tenant: string, agent: string) =>
    h.store.withTenant(tenant, async (tx) => {
      const db = h.store.sqlite?.handle(tx);
      assert.ok(db);
      const set = linkingNodes(db, tenant);
      const r = await reachability(storeGraphSource(tx, tenant, db), agent);
      return { cached: set === undefined ? undefined : set.size, reached: r.items.map((i) => i.resource.id).sort(), total: r.total };
    });

  it('answers through the probe for a tenant past the cap, and alike for tenants that take turns in it', async () => {
    const big = await addTenant(h.store);
    const bigGraph = await chain(h, big, 5);
    const small = await addTenant(h.store);
    const smallGraph = await chain(h, small, 2);
    const other = await addTenant(h.store);
    const otherGraph = await chain(h, other, 2);
    const memory = async (g: { agent: string; nodes: GraphNode[]; edges: GraphEdge[] }) =>
      (await reachability(memoryGraphSource(g.nodes, g.edges), g.agent)).items.map((i) => i.resource.id).sort();

    const b = await search(big, bigGraph.agent);
    assert.equal(b.cached, undefined, '5 linking resources do not fit in 3');
    assert.equal(b.total, 5, 'the whole chain is reached through the probe');
    assert.deepEqual(b.reached, await memory(bigGraph));

    // 2 + 2 do not fit together: each load forgets the other tenant, answers stay exact.
    for (const [tenant, g] of [[small, smallGraph], [other, otherGraph], [small, smallGraph], [other, otherGraph]] as const) {
      const r = await search(tenant, g.agent);
      assert.equal(r.cached, 2);
      assert.deepEqual(r.reached, await memory(g));
    }

    // A tenant in the set that grows past the cap through the change log is dropped, and still answers.
    await h.store.withTenant(small, (tx) =>
      tx.updateTable('access_nodes').set({ class: 'code' }).where('tenant_id', '=', small).where('kind', '=', 'resource').execute(),
    );
    const extra = newId();
    await h.admin.query(
      "insert into access_nodes (id, tenant_id, kind, ref, name, class, parent_id, created_at) values (?, ?, 'resource', ?, 'x', " +
        "'credential', null, ?)",
      [extra, small, extra, nowTimestamp()],
    );
    await h.admin.query(
      "insert into access_nodes (id, tenant_id, kind, ref, name, class, parent_id, created_at) values (?, ?, 'resource', ?, 'y', " +
        "'credential', null, ?)",
      [newId(), small, `y-${extra}`, nowTimestamp()],
    );
    const grown = await search(small, smallGraph.agent);
    assert.equal(grown.cached, undefined, '4 linking resources now');
    assert.deepEqual(grown.reached, await memory(smallGraph), 'code links as config did');
  });
});
