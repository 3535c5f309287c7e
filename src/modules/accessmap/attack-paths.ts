/**
 * Attack paths over the access graph (docs/accessmap.md "Attack paths"). Principals are agents,
 * sessions and identities; one principal can act as another through three kinds of link:
 *
 * - `runs`: an agent acts through each of its sessions (a session's `parent_id`);
 * - `credential`: a principal that can read a `credential` resource acts as the identity it
 *   authenticates (the resource's `parent_id`);
 * - `writes`: a principal that can write (`rw`) a `config` or `code` resource controls every other
 *   principal that reads it (configuration is obeyed, code is executed).
 *
 * An access edge counts whether it is permitted, observed or both; each hop says which. Searches
 * are breadth-first, so every returned path is a shortest one; they are bounded by `maxDepth`
 * principal hops, by `maxNodes` visited principals, and the answer by `limit` paths.
 */
import { weakerConfidence, type Confidence, type Mode, type NodeKind, type OriginKind, type ResourceClass } from './model.js';
import type { GraphEdge, GraphNode, GraphSource } from './graph-source.js';

export type HopVia = 'runs' | 'credential' | 'writes' | 'access';
export type HopBasis = 'structure' | 'permitted' | 'observed' | 'permitted+observed';

export interface NodeRef {
  kind: NodeKind;
  id: string;
  name: string | null;
}

export interface Hop {
  from: NodeRef;
  to: NodeRef;
  via: HopVia;
  /** the resource the hop goes through (`credential`, `writes`) or ends at (`access`) */
  resource_id: string | null;
  mode: Mode | null;
  basis: HopBasis;
  /** attribution confidence when the hop rests on observation only; null for grants and structure */
  confidence: Confidence | null;
}

export interface AttackPath {
  length: number;
  /** the weakest confidence of any observation-only hop; `high` when every hop is a grant or structure */
  confidence: Confidence;
  hops: Hop[];
}

export interface SearchBounds {
  maxDepth: number;
  maxNodes: number;
  limit: number;
}

export const DEFAULT_BOUNDS: SearchBounds = { maxDepth: 6, maxNodes: 20_000, limit: 100 };

interface Principal {
  id: string;
  kind: OriginKind;
}

interface Link {
  from: Principal;
  to: Principal;
  via: Exclude<HopVia, 'access'>;
  resource_id: string | null;
  mode: Mode | null;
  edge: GraphEdge | null;
}

const VIA_ORDER: Record<HopVia, number> = { runs: 0, credential: 1, writes: 2, access: 3 };

function linkOrder(a: Link, b: Link): number {
  return cmp(a.from.id, b.from.id) || VIA_ORDER[a.via] - VIA_ORDER[b.via] || cmp(a.resource_id ?? '', b.resource_id ?? '') || cmp(a.to.id, b.to.id);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function basisOf(e: GraphEdge | null): HopBasis {
  if (!e) return 'structure';
  if (e.permitted && e.observed) return 'permitted+observed';
  return e.permitted ? 'permitted' : 'observed';
}

function hopConfidence(e: GraphEdge | null): Confidence | null {
  return e && !e.permitted && e.observed ? (e.confidence ?? 'low') : null;
}

/** Remembers each origin's edges, so the last step of a search does not read them again. */
function withEdgeCache(src: GraphSource): GraphSource {
  const from = new Map<string, GraphEdge[]>();
  return {
    ...src,
    async edgesFrom(ids) {
      const missing = [...new Set(ids)].filter((id) => !from.has(id));
      if (missing.length > 0) {
        for (const id of missing) from.set(id, []);
        for (const e of await src.edgesFrom(missing)) (from.get(e.origin_id) as GraphEdge[]).push(e);
      }
      return [...new Set(ids)].flatMap((id) => from.get(id) ?? []);
    },
  };
}

/** Loads the nodes of `ids` not yet in `cache`. */
async function fill(src: GraphSource, ids: Iterable<string>, cache: Map<string, GraphNode>): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !cache.has(id));
  if (missing.length === 0) return;
  for (const [id, n] of await src.nodes(missing)) cache.set(id, n);
}

const controls = (n: GraphNode | undefined): boolean => n?.kind === 'resource' && (n.class === 'config' || n.class === 'code');

/** The links leaving `frontier`, in a deterministic order. */
export async function linksFrom(src: GraphSource, frontier: readonly Principal[], cache: Map<string, GraphNode>): Promise<Link[]> {
  const links: Link[] = [];
  const agents = frontier.filter((p) => p.kind === 'agent').map((p) => p.id);
  if (agents.length > 0) {
    for (const s of await src.children(agents)) {
      if (s.kind === 'session' && s.parent_id) links.push({ from: { id: s.parent_id, kind: 'agent' }, to: { id: s.id, kind: 'session' }, via: 'runs', resource_id: null, mode: null, edge: null });
    }
  }
  const edges = await src.edgesFrom(frontier.map((p) => p.id));
  await fill(src, edges.map((e) => e.resource_id), cache);
  const writers = new Map<string, GraphEdge[]>();
  for (const e of edges) {
    const r = cache.get(e.resource_id);
    if (r?.kind === 'resource' && r.class === 'credential' && r.parent_id) {
      links.push({ from: { id: e.origin_id, kind: e.origin_kind }, to: { id: r.parent_id, kind: 'identity' }, via: 'credential', resource_id: r.id, mode: e.mode, edge: e });
    }
    if (e.mode === 'rw' && controls(r)) writers.set(e.resource_id, [...(writers.get(e.resource_id) ?? []), e]);
  }
  if (writers.size > 0) {
    for (const rd of await src.edgesTo([...writers.keys()])) {
      for (const w of writers.get(rd.resource_id) ?? []) {
        if (rd.origin_id === w.origin_id) continue;
        links.push({ from: { id: w.origin_id, kind: w.origin_kind }, to: { id: rd.origin_id, kind: rd.origin_kind }, via: 'writes', resource_id: rd.resource_id, mode: 'rw', edge: w });
      }
    }
  }
  return links.sort(linkOrder);
}

/** The links arriving at `frontier`, in a deterministic order (the reverse of `linksFrom`). */
export async function linksTo(src: GraphSource, frontier: readonly Principal[], cache: Map<string, GraphNode>): Promise<Link[]> {
  const links: Link[] = [];
  const sessions = frontier.filter((p) => p.kind === 'session').map((p) => p.id);
  await fill(src, sessions, cache);
  for (const id of sessions) {
    const s = cache.get(id);
    if (s?.kind === 'session' && s.parent_id) links.push({ from: { id: s.parent_id, kind: 'agent' }, to: { id, kind: 'session' }, via: 'runs', resource_id: null, mode: null, edge: null });
  }
  const identities = frontier.filter((p) => p.kind === 'identity').map((p) => p.id);
  if (identities.length > 0) {
    const creds = (await src.children(identities)).filter((n) => n.kind === 'resource' && n.class === 'credential');
    for (const c of creds) cache.set(c.id, c);
    for (const e of await src.edgesTo(creds.map((c) => c.id))) {
      const c = cache.get(e.resource_id) as GraphNode;
      links.push({ from: { id: e.origin_id, kind: e.origin_kind }, to: { id: c.parent_id as string, kind: 'identity' }, via: 'credential', resource_id: c.id, mode: e.mode, edge: e });
    }
  }
  const reads = await src.edgesFrom(frontier.map((p) => p.id));
  await fill(src, reads.map((e) => e.resource_id), cache);
  const readers = new Map<string, GraphEdge[]>();
  for (const e of reads) if (controls(cache.get(e.resource_id))) readers.set(e.resource_id, [...(readers.get(e.resource_id) ?? []), e]);
  if (readers.size > 0) {
    for (const w of await src.edgesTo([...readers.keys()])) {
      if (w.mode !== 'rw') continue;
      for (const rd of readers.get(w.resource_id) ?? []) {
        if (rd.origin_id === w.origin_id) continue;
        links.push({ from: { id: w.origin_id, kind: w.origin_kind }, to: { id: rd.origin_id, kind: rd.origin_kind }, via: 'writes', resource_id: w.resource_id, mode: 'rw', edge: w });
      }
    }
  }
  return links.sort(linkOrder);
}

interface Visit {
  kind: OriginKind;
  depth: number;
  link: Link | null;
}

/** Breadth-first over principal links from `start`; each reached principal keeps the link it was first reached by. */
export async function principalsFrom(src: GraphSource, start: Principal, bounds: SearchBounds, cache: Map<string, GraphNode>): Promise<{ reached: Map<string, Visit>; truncated: boolean }> {
  const reached = new Map<string, Visit>([[start.id, { kind: start.kind, depth: 0, link: null }]]);
  let frontier: Principal[] = [start];
  let truncated = false;
  for (let depth = 1; depth <= bounds.maxDepth && frontier.length > 0 && !truncated; depth++) {
    const next: Principal[] = [];
    for (const l of await linksFrom(src, frontier, cache)) {
      if (reached.has(l.to.id)) continue;
      if (reached.size >= bounds.maxNodes) {
        truncated = true;
        break;
      }
      reached.set(l.to.id, { kind: l.to.kind, depth, link: l });
      next.push(l.to);
    }
    frontier = next;
  }
  return { reached, truncated };
}

function chainTo(reached: Map<string, Visit>, id: string): Link[] {
  const links: Link[] = [];
  for (let v = reached.get(id); v?.link; v = reached.get(v.link.from.id)) links.unshift(v.link);
  return links;
}

function toHop(l: Link): Omit<Hop, 'from' | 'to'> & { from: Principal; to: Principal } {
  return { from: l.from, to: l.to, via: l.via, resource_id: l.resource_id, mode: l.mode, basis: basisOf(l.edge), confidence: hopConfidence(l.edge) };
}

function accessHop(e: GraphEdge): Omit<Hop, 'from' | 'to'> & { from: Principal; to: { id: string; kind: 'resource' } } {
  return { from: { id: e.origin_id, kind: e.origin_kind }, to: { id: e.resource_id, kind: 'resource' }, via: 'access', resource_id: e.resource_id, mode: e.mode, basis: basisOf(e), confidence: hopConfidence(e) };
}

type RawHop = Omit<Hop, 'from' | 'to'> & { from: { id: string; kind: NodeKind }; to: { id: string; kind: NodeKind } };

function pathOf(hops: RawHop[], names: Map<string, GraphNode>): AttackPath {
  const ref = (p: { id: string; kind: NodeKind }): NodeRef => ({ kind: names.get(p.id)?.kind ?? p.kind, id: p.id, name: names.get(p.id)?.name ?? null });
  const full = hops.map((h) => ({ ...h, from: ref(h.from), to: ref(h.to) }));
  const confidence = full.reduce<Confidence>((c, h) => (h.confidence ? weakerConfidence(c, h.confidence) : c), 'high');
  return { length: full.length, confidence, hops: full };
}

const CONF_ORDER: Record<Confidence, number> = { high: 0, medium: 1, low: 2 };

export interface EscalationResult {
  start: NodeRef;
  targets: Array<{ target: NodeRef; path: AttackPath }>;
  /** more targets exist than `limit` returned, or the search hit `maxNodes` */
  truncated: boolean;
}

/** Principals an agent can come to act as (beyond its own sessions), each with a shortest path; ranked shortest, then most certain. */
export async function escalation(src: GraphSource, agentId: string, bounds: SearchBounds = DEFAULT_BOUNDS): Promise<EscalationResult> {
  const cache = new Map<string, GraphNode>();
  const { reached, truncated } = await principalsFrom(src, { id: agentId, kind: 'agent' }, bounds, cache);
  await fill(src, reached.keys(), cache);
  const found: Array<{ target: NodeRef; path: AttackPath }> = [];
  for (const [id, v] of reached) {
    if (id === agentId) continue;
    const chain = chainTo(reached, id);
    // The agent's own sessions act with its own authority: not an escalation.
    if (chain.every((l) => l.via === 'runs')) continue;
    const path = pathOf(chain.map(toHop), cache);
    found.push({ target: { kind: v.kind, id, name: cache.get(id)?.name ?? null }, path });
  }
  found.sort((a, b) => a.path.length - b.path.length || CONF_ORDER[a.path.confidence] - CONF_ORDER[b.path.confidence] || cmp(a.target.id, b.target.id));
  return { start: { kind: 'agent', id: agentId, name: cache.get(agentId)?.name ?? null }, targets: found.slice(0, bounds.limit), truncated: truncated || found.length > bounds.limit };
}

export interface ReachItem {
  resource: NodeRef & { class: ResourceClass | null };
  /** the strongest mode any reached principal holds on it */
  mode: Mode;
  path: AttackPath;
}

/** Resources an agent can reach, directly or through escalation; per resource the strongest mode, then the shortest path to it. */
export async function reachability(source: GraphSource, agentId: string, bounds: SearchBounds = DEFAULT_BOUNDS): Promise<{ start: NodeRef; items: ReachItem[]; total: number; truncated: boolean }> {
  const src = withEdgeCache(source);
  const cache = new Map<string, GraphNode>();
  const { reached, truncated } = await principalsFrom(src, { id: agentId, kind: 'agent' }, bounds, cache);
  const best = new Map<string, { edge: GraphEdge; depth: number }>();
  for (const e of await src.edgesFrom([...reached.keys()])) {
    const depth = (reached.get(e.origin_id) as Visit).depth;
    const cur = best.get(e.resource_id);
    const better = !cur || (e.mode === 'rw' && cur.edge.mode === 'r') || (e.mode === cur.edge.mode && (depth < cur.depth || (depth === cur.depth && e.origin_id < cur.edge.origin_id)));
    if (better) best.set(e.resource_id, { edge: e, depth });
  }
  const ranked = [...best.entries()].sort(([ra, a], [rb, b]) => a.depth - b.depth || cmp(ra, rb));
  const kept = ranked.slice(0, bounds.limit);
  await fill(src, [...reached.keys(), ...kept.map(([r]) => r)], cache);
  const items = kept.map(([rid, { edge }]) => {
    const hops: RawHop[] = [...chainTo(reached, edge.origin_id).map(toHop), accessHop(edge)];
    const node = cache.get(rid);
    return { resource: { kind: 'resource' as const, id: rid, name: node?.name ?? null, class: node?.class ?? null }, mode: edge.mode, path: pathOf(hops, cache) };
  });
  return { start: { kind: 'agent', id: agentId, name: cache.get(agentId)?.name ?? null }, items, total: ranked.length, truncated: truncated || ranked.length > bounds.limit };
}

export interface ExfilItem {
  principal: NodeRef;
  /** the mode of the final access to the resource */
  mode: Mode;
  path: AttackPath;
}

/** Principals that can come to read a resource, each with a shortest path ending in an access to it; agents first among equals. */
export async function exfil(src: GraphSource, resourceId: string, bounds: SearchBounds = DEFAULT_BOUNDS): Promise<{ resource: NodeRef; items: ExfilItem[]; total: number; truncated: boolean }> {
  const cache = new Map<string, GraphNode>();
  const reached = new Map<string, { kind: OriginKind; depth: number; next: Link | null; access: GraphEdge | null }>();
  const direct = (await src.edgesTo([resourceId])).sort((a, b) => cmp(a.origin_id, b.origin_id) || (a.mode === 'rw' ? -1 : 1));
  let frontier: Principal[] = [];
  for (const e of direct) {
    if (reached.has(e.origin_id)) continue;
    reached.set(e.origin_id, { kind: e.origin_kind, depth: 0, next: null, access: e });
    frontier.push({ id: e.origin_id, kind: e.origin_kind });
  }
  let truncated = false;
  for (let depth = 1; depth <= bounds.maxDepth && frontier.length > 0 && !truncated; depth++) {
    const next: Principal[] = [];
    for (const l of await linksTo(src, frontier, cache)) {
      if (reached.has(l.from.id)) continue;
      if (reached.size >= bounds.maxNodes) {
        truncated = true;
        break;
      }
      reached.set(l.from.id, { kind: l.from.kind, depth, next: l, access: null });
      next.push(l.from);
    }
    frontier = next;
  }
  const kindOrder: Record<string, number> = { agent: 0, session: 1, identity: 2 };
  const ranked = [...reached.entries()].sort(([ia, a], [ib, b]) => a.depth - b.depth || (kindOrder[a.kind] ?? 9) - (kindOrder[b.kind] ?? 9) || cmp(ia, ib));
  const kept = ranked.slice(0, bounds.limit);
  await fill(src, [resourceId, ...reached.keys()], cache);
  const items = kept.map(([id, v]) => {
    const hops: RawHop[] = [];
    let cur = v;
    let at = id;
    while (cur.next) {
      hops.push(toHop(cur.next));
      at = cur.next.to.id;
      cur = reached.get(at) as typeof cur;
    }
    const access = cur.access as GraphEdge;
    hops.push(accessHop(access));
    return { principal: { kind: v.kind, id, name: cache.get(id)?.name ?? null }, mode: access.mode, path: pathOf(hops, cache) };
  });
  const r = cache.get(resourceId);
  return { resource: { kind: 'resource', id: resourceId, name: r?.name ?? null }, items, total: ranked.length, truncated: truncated || ranked.length > bounds.limit };
}
