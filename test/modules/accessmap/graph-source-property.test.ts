/**
 * The store's GraphSource against the in-memory one (which the path property tests check against a
 * plain BFS): random graphs written to a real database answer every search exactly as in memory.
 * The store reads with its own SQL (index-only accesses in key order, linking-resource
 * probes, a work budget applied as the database's `limit` in a shared order), so this is what ties
 * those queries to the algorithms' semantics on each backend, cut searches included.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { newId } from '../../../src/store/ids.js';
import { escalation, exfil, MAX_BUDGET, reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { memoryGraphSource, storeGraphSource, type GraphEdge, type GraphNode } from '../../../src/modules/accessmap/graph-source.js';
import { nowTimestamp } from '../../../src/ledger/time.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant, agentRow } from '../../store/store-fixtures.js';
import { arbitraryGraph, type Graph } from './graph-fixtures.js';

/** The graph under fresh ids in the same order (the algorithms order by id; ids are global keys). */
function renumbered(g: Graph): Graph {
  const map = new Map([...g.nodes.map((n) => n.id), ...g.edges.map((e) => e.id)].sort().map((id) => [id, newId()]));
  const to = (id: string) => map.get(id) as string;
  return {
    nodes: g.nodes.map((n) => ({ ...n, id: to(n.id), parent_id: n.parent_id === null ? null : to(n.parent_id) })),
    edges: g.edges.map((e) => ({ ...e, id: to(e.id), origin_id: to(e.origin_id), resource_id: to(e.resource_id) })),
  };
}

/**
 * Node numbers against id order (the highest id gets the lowest number), above any number in use:
 * the stores read edges in number order, and a source that read them in id order would cut a
 * search elsewhere than the in-memory graph told the same numbers.
 */
async function numbersFor(h: TestStore, g: Graph): Promise<Map<string, number>> {
  const top = Number(
    (
      await h.admin.query<{ m: number | string | null }>(
        'select max(m) as m from (select max(no) as m from agents union all select max(no) as m from access_nodes) x',
      )
    )[0]?.m ?? 0,
  );
  const ids = g.nodes.map((n) => n.id).sort().reverse();
  return new Map(ids.map((id, i) => [id, top + 1 + i]));
}

async function write(h: TestStore, tenant: string, g: Graph, numbers: ReadonlyMap<string, number>): Promise<void> {
  const now = nowTimestamp();
  const no = (id: string) => numbers.get(id) as number;
  await h.store.withTenant(tenant, async (tx) => {
    const agents = g.nodes.filter((n) => n.kind === 'agent');
    if (agents.length > 0)
      await tx
        .insertInto('agents')
        .values(agents.map((a) => ({ ...agentRow(tenant, { id: a.id, name: a.name }), no: no(a.id) })))
        .execute();
    const others = g.nodes.filter((n): n is GraphNode & { kind: 'session' | 'identity' | 'resource' } => n.kind !== 'agent');
    if (others.length > 0) {
      await tx
        .insertInto('access_nodes')
        .values(
          others.map((n) => ({
            id: n.id,
            tenant_id: tenant,
            kind: n.kind,
            ref: n.id,
            name: n.name,
            class: n.class ?? '',
            parent_id: n.parent_id,
            created_at: now,
            no: no(n.id),
          })),
        )
        .execute();
    }
    const row = (e: GraphEdge) => ({
      id: e.id,
      tenant_id: tenant,
      origin_kind: e.origin_kind,
      origin_id: e.origin_id,
      origin_no: no(e.origin_id),
      resource_id: e.resource_id,
      resource_no: no(e.resource_id),
      mode: e.mode,
      permitted: e.permitted ? 1 : 0,
      grant_source: e.permitted ? 'iam' : '',
      observed_count: e.observed ? 1 : 0,
      first_seen: e.observed ? now : null,
      last_seen: e.observed ? now : null,
      confidence: e.confidence ?? '',
      signal_source: 'test',
      created_at: now,
      updated_at: now,
    });
    if (g.edges.length > 0) await tx.insertInto('access_edges').values(g.edges.map(row)).execute();
  });
}

for (const b of await testStores()) {
  describe(`${b.backend}: stored graph searches agree with the in-memory graph (fast-check)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('escalation, reachability and exfil: same answers, paths and bounds (a work budget that cuts included)', async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraryGraph,
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 6 }),
          fc.oneof(fc.constant(MAX_BUDGET), fc.integer({ min: 1, max: 12 })),
          async (raw, maxDepth, limit, budget) => {
            const g = renumbered(raw);
            const tenant = await addTenant(h.store);
            const numbers = await numbersFor(h, g);
            await write(h, tenant, g, numbers);
            const mem = memoryGraphSource(g.nodes, g.edges, numbers);
            const bounds = { maxDepth, maxNodes: 100_000, limit, budget };
            await h.store.withTenant(tenant, async (tx) => {
              // On SQLite the connection's own statements (what the routes use), else the query builder.
              const src = storeGraphSource(tx, tenant, h.store.sqlite?.handle(tx));
              for (const a of g.nodes.filter((n) => n.kind === 'agent')) {
                assert.deepEqual(await escalation(src, a.id, bounds), await escalation(mem, a.id, bounds));
                assert.deepEqual(await reachability(src, a.id, bounds), await reachability(mem, a.id, bounds));
              }
              for (const r of g.nodes.filter((n) => n.kind === 'resource'))
                assert.deepEqual(await exfil(src, r.id, bounds), await exfil(mem, r.id, bounds));
            });
          },
        ),
        { numRuns: 40 },
      );
    });
  });
}
