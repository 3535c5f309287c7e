/** Small graphs for the path tests: a readable builder and a random generator for property tests. */
import fc from 'fast-check';
import type { GraphEdge, GraphNode } from '../../../src/modules/accessmap/graph-source.js';
import type { Confidence, Mode, OriginKind, ResourceClass } from '../../../src/modules/accessmap/model.js';

/** Deterministic UUID-shaped ids from a small number (the algorithms order by id). */
export function idOf(n: number): string {
  return `00000000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** A builder: name nodes, then connect them. */
export class GraphBuilder {
  readonly nodes: GraphNode[] = [];
  readonly edges: GraphEdge[] = [];
  private next = 1;
  readonly ids = new Map<string, string>();

  node(name: string, kind: GraphNode['kind'], opts: { class?: ResourceClass; parent?: string } = {}): string {
    const id = idOf(this.next++);
    this.ids.set(name, id);
    this.nodes.push({
      id,
      kind,
      name,
      class: kind === 'resource' ? (opts.class ?? 'data') : null,
      parent_id: opts.parent ? this.id(opts.parent) : null,
    });
    return id;
  }

  id(name: string): string {
    const id = this.ids.get(name);
    if (!id) throw new Error(`no node ${name}`);
    return id;
  }

  access(origin: string, resource: string, mode: Mode, how: { permitted?: boolean; observed?: Confidence } = { permitted: true }): this {
    const o = this.nodes.find((n) => n.id === this.id(origin)) as GraphNode;
    this.edges.push({
      id: idOf(10_000 + this.edges.length),
      origin_kind: o.kind as OriginKind,
      origin_id: o.id,
      resource_id: this.id(resource),
      mode,
      permitted: how.permitted ?? false,
      observed: how.observed !== undefined,
      confidence: how.observed ?? null,
    });
    return this;
  }

  graph(): Graph {
    return { nodes: this.nodes, edges: this.edges };
  }
}

/** Random small graphs: every principal kind, every resource class, credentials pointing at identities. */
export const arbitraryGraph: fc.Arbitrary<Graph> = fc
  .record({
    agents: fc.integer({ min: 1, max: 4 }),
    sessions: fc.array(fc.nat(3), { maxLength: 4 }),
    identities: fc.integer({ min: 0, max: 3 }),
    resources: fc.array(fc.record({ cls: fc.constantFrom<ResourceClass>('data', 'config', 'code', 'credential'), parent: fc.nat(2) }), {
      minLength: 1,
      maxLength: 7,
    }),
    edges: fc.array(
      fc.record({
        o: fc.nat(50),
        r: fc.nat(50),
        rw: fc.boolean(),
        permitted: fc.boolean(),
        conf: fc.constantFrom<Confidence | null>(null, 'high', 'medium', 'low'),
      }),
      { maxLength: 22 },
    ),
  })
  .map((spec) => {
    const nodes: GraphNode[] = [];
    let n = 1;
    const agents = Array.from({ length: spec.agents }, (_, i) => ({
      id: idOf(n++),
      kind: 'agent' as const,
      name: `agent-${i}`,
      class: null,
      parent_id: null,
    }));
    const sessions = spec.sessions.map((p, i) => ({
      id: idOf(n++),
      kind: 'session' as const,
      name: `session-${i}`,
      class: null,
      parent_id: (agents[p % agents.length] as GraphNode).id,
    }));
    const identities = Array.from({ length: spec.identities }, (_, i) => ({
      id: idOf(n++),
      kind: 'identity' as const,
      name: `identity-${i}`,
      class: null,
      parent_id: null,
    }));
    const resources = spec.resources.map((r, i) => ({
      id: idOf(n++),
      kind: 'resource' as const,
      name: `resource-${i}`,
      class: r.cls,
      parent_id: r.cls === 'credential' && identities.length > 0 ? (identities[r.parent % identities.length] as GraphNode).id : null,
    }));
    nodes.push(...agents, ...sessions, ...identities, ...resources);
    const principals: GraphNode[] = [...agents, ...sessions, ...identities];
    const seen = new Set<string>();
    const edges: GraphEdge[] = [];
    for (const e of spec.edges) {
      const o = principals[e.o % principals.length] as GraphNode;
      const r = resources[e.r % resources.length] as GraphNode;
      const mode: Mode = e.rw ? 'rw' : 'r';
      const key = `${o.id}|${r.id}|${mode}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const observed = e.conf !== null;
      // A stored edge is permitted, observed or both (the table's CHECK).
      const permitted = e.permitted || !observed;
      edges.push({
        id: idOf(10_000 + edges.length),
        origin_kind: o.kind as OriginKind,
        origin_id: o.id,
        resource_id: r.id,
        mode,
        permitted,
        observed,
        confidence: e.conf,
      });
    }
    return { nodes, edges };
  });

/** The plain BFS the property tests compare against: the three link rules written out directly. */
export function plainBfs(g: Graph, start: string, maxDepth: number): Map<string, number> {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const adj = (p: string): string[] => {
    const out: string[] = [];
    for (const n of g.nodes) if (n.kind === 'session' && n.parent_id === p && byId.get(p)?.kind === 'agent') out.push(n.id);
    for (const e of g.edges) {
      if (e.origin_id !== p) continue;
      const r = byId.get(e.resource_id) as GraphNode;
      if (r.class === 'credential' && r.parent_id) out.push(r.parent_id);
      if (e.mode === 'rw' && (r.class === 'config' || r.class === 'code')) {
        for (const q of g.edges) if (q.resource_id === r.id && q.origin_id !== p) out.push(q.origin_id);
      }
    }
    return out;
  };
  const dist = new Map<string, number>([[start, 0]]);
  let frontier = [start];
  for (let d = 1; d <= maxDepth && frontier.length > 0; d++) {
    const next: string[] = [];
    for (const p of frontier) for (const q of adj(p)) if (!dist.has(q)) (dist.set(q, d), next.push(q));
    frontier = next;
  }
  return dist;
}
