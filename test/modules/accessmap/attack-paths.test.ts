import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { escalation, exfil, MAX_BUDGET, reachability, type AttackPath } from '../../../src/modules/accessmap/attack-paths.js';
import { memoryGraphSource, type GraphNode } from '../../../src/modules/accessmap/graph-source.js';
import { arbitraryGraph, GraphBuilder, plainBfs, type Graph } from './graph-fixtures.js';

const BIG = { maxDepth: 6, maxNodes: 100_000, limit: 1000, budget: MAX_BUDGET };

/**
 * A agent writes the config B reads; B reads the key that authenticates as deploy-bot; deploy-bot
 * writes the prod database. A's own session reads source code. Nothing else links.
 */
function estate() {
  const b = new GraphBuilder();
  b.node('A', 'agent');
  b.node('B', 'agent');
  b.node('C', 'agent');
  b.node('S1', 'session', { parent: 'A' });
  b.node('deploy-bot', 'identity');
  b.node('cfg', 'resource', { class: 'config' });
  b.node('key', 'resource', { class: 'credential', parent: 'deploy-bot' });
  b.node('db', 'resource', { class: 'data' });
  b.node('src', 'resource', { class: 'code' });
  b.node('notes', 'resource', { class: 'data' });
  b.access('A', 'cfg', 'rw')
    .access('B', 'cfg', 'r', { observed: 'high' })
    .access('B', 'key', 'r')
    .access('deploy-bot', 'db', 'rw')
    .access('S1', 'src', 'r', { observed: 'medium' })
    // Writing plain data controls nobody: C writes notes that B reads, and gains nothing.
    .access('C', 'notes', 'rw')
    .access('B', 'notes', 'r');
  return b;
}

describe('attack paths on a hand-built estate', () => {
  it('escalation: A controls B through the config B reads, then deploy-bot through the key B reads', async () => {
    const b = estate();
    const g = b.graph();
    const res = await escalation(memoryGraphSource(g.nodes, g.edges), b.id('A'), BIG);
    assert.deepEqual(
      res.targets.map((t) => [
        t.target.name,
        t.path.length,
        t.path.hops.map(
          (h) => `${h.from.name}-${h.via}:${h.resource_id ? g.nodes.find((n) => n.id === h.resource_id)?.name : ''}->${h.to.name}`,
        ),
      ]),
      [
        ['B', 1, ['A-writes:cfg->B']],
        ['deploy-bot', 2, ['A-writes:cfg->B', 'B-credential:key->deploy-bot']],
      ],
    );
    // The write hop rests on a grant; B's read of cfg was only observed (high), which the reader side does not weaken.
    assert.equal(res.targets[0]?.path.hops[0]?.basis, 'permitted');
    assert.equal(res.truncated, false);
    const c = await escalation(memoryGraphSource(g.nodes, g.edges), b.id('C'), BIG);
    assert.deepEqual(c.targets, [], 'writing a data resource is not a control link');
  });

  it('reachability: per resource the strongest mode and the shortest path to it', async () => {
    const b = estate();
    const g = b.graph();
    const res = await reachability(memoryGraphSource(g.nodes, g.edges), b.id('A'), BIG);
    const got = res.items.map((i) => [i.resource.name, i.mode, i.path.length, i.path.confidence]);
    assert.deepEqual(got, [
      ['cfg', 'rw', 1, 'high'],
      // Equal lengths are ordered by resource id (creation order here: key, then src, then notes).
      ['key', 'r', 2, 'high'],
      ['src', 'r', 2, 'medium'],
      ['notes', 'r', 2, 'high'],
      ['db', 'rw', 3, 'high'],
    ]);
    assert.equal(res.total, 5);
    assert.deepEqual([res.complete, res.truncated, res.total_at_least], [true, false, undefined]);
    const limited = await reachability(memoryGraphSource(g.nodes, g.edges), b.id('A'), { ...BIG, limit: 2 });
    assert.equal(limited.items.length, 2);
    assert.equal(limited.truncated, true);
    const shallow = await reachability(memoryGraphSource(g.nodes, g.edges), b.id('A'), { ...BIG, maxDepth: 1 });
    assert.deepEqual(shallow.items.map((i) => i.resource.name).sort(), ['cfg', 'key', 'notes', 'src'], 'db needs two principal hops');
  });

  it('exfil: who can come to read the prod database, shortest first, paths written forward', async () => {
    const b = estate();
    const g = b.graph();
    const res = await exfil(memoryGraphSource(g.nodes, g.edges), b.id('db'), BIG);
    assert.deepEqual(
      res.items.map((i) => [i.principal.name, i.path.length, i.path.hops.map((h) => `${h.from.name}>${h.to.name}`)]),
      [
        ['deploy-bot', 1, ['deploy-bot>db']],
        ['B', 2, ['B>deploy-bot', 'deploy-bot>db']],
        ['A', 3, ['A>B', 'B>deploy-bot', 'deploy-bot>db']],
      ],
    );
    assert.equal(res.items[2]?.mode, 'rw');
  });

  it('a path through an observation-only hop is only as certain as that attribution', async () => {
    const b = new GraphBuilder();
    b.node('A', 'agent');
    b.node('svc', 'identity');
    b.node('key', 'resource', { class: 'credential', parent: 'svc' });
    b.node('vault', 'resource');
    b.access('A', 'key', 'r', { observed: 'low' }).access('svc', 'vault', 'r', { permitted: true, observed: 'high' });
    const g = b.graph();
    const res = await reachability(memoryGraphSource(g.nodes, g.edges), b.id('A'), BIG);
    const vault = res.items.find((i) => i.resource.name === 'vault');
    assert.equal(vault?.path.confidence, 'low');
    assert.deepEqual(vault?.path.hops.map((h) => h.basis), ['observed', 'permitted+observed']);
  });

  it('bounds: maxNodes stops the search and says so', async () => {
    const b = new GraphBuilder();
    b.node('A', 'agent');
    b.node('cfg', 'resource', { class: 'config' });
    b.access('A', 'cfg', 'rw');
    for (let i = 0; i < 30; i++) {
      b.node(`R${i}`, 'agent');
      b.access(`R${i}`, 'cfg', 'r');
    }
    const g = b.graph();
    const res = await escalation(memoryGraphSource(g.nodes, g.edges), b.id('A'), { ...BIG, maxNodes: 10, limit: 100 });
    assert.equal(res.truncated, true);
    assert.equal(res.targets.length, 9);
  });
});

/** Checks a path hop by hop against the raw graph; returns a reason or undefined. */
function pathProblem(g: Graph, path: AttackPath, startId: string, endId: string): string | undefined {
  const node = (id: string) => g.nodes.find((n) => n.id === id) as GraphNode;
  const edge = (o: string, r: string, mode?: string) =>
    g.edges.find((e) => e.origin_id === o && e.resource_id === r && (mode === undefined || e.mode === mode));
  if (path.hops[0]?.from.id !== startId) return 'does not start at the start';
  if (path.hops[path.hops.length - 1]?.to.id !== endId) return 'does not end at the end';
  if (path.length !== path.hops.length) return 'length is not the hop count';
  for (let i = 0; i < path.hops.length; i++) {
    const h = path.hops[i] as AttackPath['hops'][number];
    if (i > 0 && path.hops[i - 1]?.to.id !== h.from.id) return `hop ${i} is not connected`;
    const r = h.resource_id ? node(h.resource_id) : undefined;
    switch (h.via) {
      case 'runs':
        if (node(h.to.id).parent_id !== h.from.id || node(h.from.id).kind !== 'agent') return `hop ${i}: no such session`;
        break;
      case 'credential':
        if (!r || r.class !== 'credential' || r.parent_id !== h.to.id || !edge(h.from.id, r.id)) return `hop ${i}: no such credential use`;
        break;
      case 'writes':
        if (!r || (r.class !== 'config' && r.class !== 'code') || !edge(h.from.id, r.id, 'rw') || !edge(h.to.id, r.id))
          return `hop ${i}: no such write`;
        break;
      case 'access':
        if (!edge(h.from.id, h.to.id, h.mode ?? undefined)) return `hop ${i}: no such access edge`;
        break;
    }
  }
  return undefined;
}

describe('attack paths on random graphs (fast-check)', () => {
  const runs = { numRuns: 150 };

  it('every returned path exists edge by edge (escalation, reachability, exfil)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryGraph, async (g) => {
        const src = memoryGraphSource(g.nodes, g.edges);
        for (const a of g.nodes.filter((n) => n.kind === 'agent')) {
          for (const t of (await escalation(src, a.id, BIG)).targets) assert.equal(pathProblem(g, t.path, a.id, t.target.id), undefined);
          for (const it of (await reachability(src, a.id, BIG)).items)
            assert.equal(pathProblem(g, it.path, a.id, it.resource.id), undefined);
        }
        for (const r of g.nodes.filter((n) => n.kind === 'resource')) {
          for (const it of (await exfil(src, r.id, BIG)).items) assert.equal(pathProblem(g, it.path, it.principal.id, r.id), undefined);
        }
      }),
      runs,
    );
  });

  it('reachability and escalation agree with a plain BFS (sets, modes and shortest lengths)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryGraph, fc.integer({ min: 1, max: 4 }), async (g, depth) => {
        const src = memoryGraphSource(g.nodes, g.edges);
        for (const a of g.nodes.filter((n) => n.kind === 'agent')) {
          const dist = plainBfs(g, a.id, depth);
          const expected = new Map<string, { mode: string; length: number }>();
          for (const e of g.edges) {
            const d = dist.get(e.origin_id);
            if (d === undefined) continue;
            const cur = expected.get(e.resource_id);
            if (!cur || (e.mode === 'rw' && cur.mode === 'r') || (e.mode === cur.mode && d + 1 < cur.length))
              expected.set(e.resource_id, { mode: e.mode, length: d + 1 });
          }
          const got = await reachability(src, a.id, { ...BIG, maxDepth: depth });
          assert.deepEqual(new Map(got.items.map((i) => [i.resource.id, { mode: i.mode, length: i.path.length }])), expected);
          const esc = await escalation(src, a.id, { ...BIG, maxDepth: depth });
          const own = new Set(g.nodes.filter((n) => n.kind === 'session' && n.parent_id === a.id).map((n) => n.id));
          const want = new Map([...dist].filter(([id]) => id !== a.id && !own.has(id)));
          assert.deepEqual(new Map(esc.targets.map((t) => [t.target.id, t.path.length])), want);
        }
      }),
      runs,
    );
  });

  it('exfil is the mirror of reachability: agent A is in exfil(R) exactly when R is in reach(A)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryGraph, async (g) => {
        const src = memoryGraphSource(g.nodes, g.edges);
        const agents = g.nodes.filter((n) => n.kind === 'agent');
        const reach = new Map<string, Set<string>>();
        for (const a of agents) reach.set(a.id, new Set((await reachability(src, a.id, BIG)).items.map((i) => i.resource.id)));
        for (const r of g.nodes.filter((n) => n.kind === 'resource')) {
          const viaExfil = new Set(
            (await exfil(src, r.id, BIG)).items.filter((i) => i.principal.kind === 'agent').map((i) => i.principal.id),
          );
          const viaReach = new Set(agents.filter((a) => reach.get(a.id)?.has(r.id)).map((a) => a.id));
          assert.deepEqual(viaExfil, viaReach);
        }
      }),
      runs,
    );
  });

  it('a work budget that cuts the search says so; its paths exist; enough budget gives the exact answer', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryGraph, fc.integer({ min: 1, max: 12 }), async (g, budget) => {
        const src = memoryGraphSource(g.nodes, g.edges);
        for (const a of g.nodes.filter((n) => n.kind === 'agent')) {
          const exact = await reachability(src, a.id, BIG);
          const cut = await reachability(src, a.id, { ...BIG, budget });
          assertBudgeted(cut, budget);
          for (const it of cut.items) assert.equal(pathProblem(g, it.path, a.id, it.resource.id), undefined);
          if (cut.complete) assert.deepEqual(cut.items, exact.items);
          // Cut: only reachable resources, each in the strongest mode found so far (never above the exact one).
          else
            assert.ok(
              cut.items.every((i) => exact.items.some((e) => e.resource.id === i.resource.id && (i.mode === e.mode || i.mode === 'r'))),
            );
          assert.deepEqual(await reachability(src, a.id, { ...BIG, budget: Math.max(1, exact.examined.edges) }), {
            ...exact,
            examined: { ...exact.examined, budget: Math.max(1, exact.examined.edges) },
          });
          const esc = await escalation(src, a.id, { ...BIG, budget });
          assertBudgeted(esc, budget);
          for (const t of esc.targets) assert.equal(pathProblem(g, t.path, a.id, t.target.id), undefined);
        }
        for (const r of g.nodes.filter((n) => n.kind === 'resource')) {
          const cut = await exfil(src, r.id, { ...BIG, budget });
          assertBudgeted(cut, budget);
          for (const it of cut.items) assert.equal(pathProblem(g, it.path, it.principal.id, r.id), undefined);
        }
      }),
      runs,
    );
  });
});

/** A budgeted answer: never more work than the budget; a cut one is flagged, with its count a lower bound. */
function assertBudgeted(
  res: { complete: boolean; truncated: boolean; examined: { edges: number; budget: number }; total?: number; total_at_least?: number },
  budget: number,
): void {
  assert.equal(res.examined.budget, budget);
  assert.ok(res.examined.edges <= budget, `examined ${res.examined.edges} > budget ${budget}`);
  if (!res.complete) {
    assert.equal(res.truncated, true);
    assert.equal(res.total, undefined);
    if ('total_at_least' in res) assert.equal(typeof res.total_at_least, 'number');
  } else if ('total_at_least' in res || 'total' in res) assert.equal(typeof res.total, 'number');
}
