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
 * principal hops, by `maxNodes` visited principals, by a work `budget` of access edges examined,
 * and the answer by `limit` paths. In a dense estate an exact answer reads nearly the whole graph,
 * so the budget stops the reads themselves (the database's `limit`), level by level: what a cut
 * search returns is the nearest part of the answer, every path real and shortest, and the answer
 * says it is incomplete (`complete: false`, totals as lower bounds), never a silent partial one.
 */
import { weakerConfidence, type Confidence, type Mode, type NodeKind, type OriginKind, type ResourceClass } from './model.js';
import { accessKey, type Access, type GraphEdge, type GraphNode, type GraphSource, type LinkedAccess } from './graph-source.js';

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
  /** access edges the search may examine */
  budget: number;
}

/** The default work budget: well inside the 100 ms reachability target on SQLite (docs/accessmap.md "Benchmark"). */
export const DEFAULT_BUDGET = 10_000;
/** The most a client may ask for: an exact answer in an estate of up to about this many edges. */
export const MAX_BUDGET = 2_000_000;

export const DEFAULT_BOUNDS: SearchBounds = { maxDepth: 6, maxNodes: 20_000, limit: 100, budget: DEFAULT_BUDGET };

/** How far a search got: whether anything within `max_depth` was left unexamined, and the work it did. */
export interface SearchExtent {
  /** false when the budget or `maxNodes` stopped the search before it examined everything within `maxDepth` */
  complete: boolean;
  examined: { edges: number; budget: number };
}

/** The work of one search: access edges examined against its budget; `cut` once a read left edges unread. */
class Work {
  examined = 0;
  cut = false;
  constructor(readonly budget: number) {}

  /** Reads at most the edges left (one more, to see whether any remain unread) and counts them; nothing once cut. */
  async read<T>(fetch: (limit: number) => Promise<T[]>): Promise<T[]> {
    if (this.cut) return [];
    const left = this.budget - this.examined;
    const rows = await fetch(left + 1);
    if (rows.length > left) {
      this.cut = true;
      rows.length = left;
    }
    this.examined += rows.length;
    return rows;
  }

  extent(nodesCut: boolean): SearchExtent {
    return { complete: !this.cut && !nodesCut, examined: { edges: this.examined, budget: this.budget } };
  }
}

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
  /** the access the link rests on; null for `runs` (structure) */
  access: Access | null;
}

const VIA_ORDER: Record<HopVia, number> = { runs: 0, credential: 1, writes: 2, access: 3 };

function linkOrder(a: Link, b: Link): number {
  // The mode last: an `r` and an `rw` edge to one credential make two links alike in all else.
  return cmp(a.from.id, b.from.id) || VIA_ORDER[a.via] - VIA_ORDER[b.via] || cmp(a.resource_id ?? '', b.resource_id ?? '') || cmp(a.to.id, b.to.id) || cmp(a.mode ?? '', b.mode ?? '');
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

/** What one search has loaded: nodes by id. */
interface SearchCache {
  nodes: Map<string, GraphNode>;
}

function newCache(): SearchCache {
  return { nodes: new Map() };
}

/** Loads the nodes of `ids` not yet in `cache`. */
async function fill(src: GraphSource, ids: Iterable<string>, cache: SearchCache): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !cache.nodes.has(id));
  if (missing.length === 0) return;
  for (const [id, n] of await src.nodes(missing)) cache.nodes.set(id, n);
}

const controls = (n: GraphNode | undefined): boolean => n?.kind === 'resource' && (n.class === 'config' || n.class === 'code');

/** The accesses of `frontier` within the budget, in the sources' (origin, resource, mode) order. */
async function accessesOf(src: GraphSource, frontier: readonly Principal[], work: Work): Promise<LinkedAccess[]> {
  return frontier.length === 0 ? [] : work.read((limit) => src.accessesFrom(frontier.map((p) => p.id), limit));
}

/** The links leaving `frontier`, given the accesses of it the search read, in a deterministic order. */
async function linksFrom(src: GraphSource, frontier: readonly Principal[], accesses: readonly LinkedAccess[], cache: SearchCache, work: Work): Promise<Link[]> {
  const links: Link[] = [];
  const agents = frontier.filter((p) => p.kind === 'agent').map((p) => p.id);
  if (agents.length > 0) {
    for (const s of await src.children(agents)) {
      if (s.kind === 'session' && s.parent_id) links.push({ from: { id: s.parent_id, kind: 'agent' }, to: { id: s.id, kind: 'session' }, via: 'runs', resource_id: null, mode: null, access: null });
    }
  }
  // Only accesses to linking resources make links; whole edges are read later, for the links a
  // returned path takes (edgesFor).
  const kindOf = new Map(frontier.map((p) => [p.id, p.kind]));
  const writers = new Map<string, Access[]>();
  for (const a of accesses) {
    const r = a.resource;
    if (!r) continue;
    cache.nodes.set(r.id, r);
    const from = { id: a.origin_id, kind: kindOf.get(a.origin_id) as OriginKind };
    const access: Access = { origin_id: a.origin_id, resource_id: r.id, mode: a.mode };
    if (r.class === 'credential' && r.parent_id) links.push({ from, to: { id: r.parent_id, kind: 'identity' }, via: 'credential', resource_id: r.id, mode: a.mode, access });
    if (a.mode === 'rw' && controls(r)) writers.set(r.id, [...(writers.get(r.id) ?? []), access]);
  }
  if (writers.size > 0) {
    for (const rd of await work.read((limit) => src.edgesTo([...writers.keys()], limit))) {
      for (const w of writers.get(rd.resource_id) ?? []) {
        if (rd.origin_id === w.origin_id) continue;
        links.push({ from: { id: w.origin_id, kind: kindOf.get(w.origin_id) as OriginKind }, to: { id: rd.origin_id, kind: rd.origin_kind }, via: 'writes', resource_id: rd.resource_id, mode: 'rw', access: w });
      }
    }
  }
  return links.sort(linkOrder);
}

/** The links arriving at `frontier`, in a deterministic order (the reverse of `linksFrom`), within the budget. */
async function linksTo(src: GraphSource, frontier: readonly Principal[], cache: SearchCache, work: Work): Promise<Link[]> {
  const links: Link[] = [];
  const sessions = frontier.filter((p) => p.kind === 'session').map((p) => p.id);
  await fill(src, sessions, cache);
  for (const id of sessions) {
    const s = cache.nodes.get(id);
    if (s?.kind === 'session' && s.parent_id) links.push({ from: { id: s.parent_id, kind: 'agent' }, to: { id, kind: 'session' }, via: 'runs', resource_id: null, mode: null, access: null });
  }
  const identities = frontier.filter((p) => p.kind === 'identity').map((p) => p.id);
  if (identities.length > 0) {
    const creds = (await src.children(identities)).filter((n) => n.kind === 'resource' && n.class === 'credential');
    for (const c of creds) cache.nodes.set(c.id, c);
    if (creds.length > 0) {
      for (const e of await work.read((limit) => src.edgesTo(creds.map((c) => c.id), limit))) {
        const c = cache.nodes.get(e.resource_id) as GraphNode;
        links.push({ from: { id: e.origin_id, kind: e.origin_kind }, to: { id: c.parent_id as string, kind: 'identity' }, via: 'credential', resource_id: c.id, mode: e.mode, access: e });
      }
    }
  }
  const kindOf = new Map(frontier.map((p) => [p.id, p.kind]));
  const readers = new Map<string, Access[]>();
  for (const a of await accessesOf(src, frontier, work)) {
    const r = a.resource;
    if (r && controls(r)) readers.set(r.id, [...(readers.get(r.id) ?? []), { origin_id: a.origin_id, resource_id: r.id, mode: a.mode }]);
  }
  if (readers.size > 0) {
    for (const w of await work.read((limit) => src.edgesTo([...readers.keys()], limit))) {
      if (w.mode !== 'rw') continue;
      for (const rd of readers.get(w.resource_id) ?? []) {
        if (rd.origin_id === w.origin_id) continue;
        links.push({ from: { id: w.origin_id, kind: w.origin_kind }, to: { id: rd.origin_id, kind: kindOf.get(rd.origin_id) as OriginKind }, via: 'writes', resource_id: w.resource_id, mode: 'rw', access: w });
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

/**
 * Breadth-first over principal links from `start`, level by level within the budget; each reached
 * principal keeps the link it was first reached by. `onAccesses` sees the accesses read at each
 * depth, the last level's included (whose links are not followed).
 */
async function principalsFrom(
  src: GraphSource,
  start: Principal,
  bounds: SearchBounds,
  cache: SearchCache,
  work: Work,
  onAccesses?: (accesses: readonly LinkedAccess[], depth: number) => void,
): Promise<{ reached: Map<string, Visit>; truncated: boolean }> {
  const reached = new Map<string, Visit>([[start.id, { kind: start.kind, depth: 0, link: null }]]);
  let frontier: Principal[] = [start];
  let truncated = false;
  for (let depth = 0; frontier.length > 0 && !work.cut; depth++) {
    const expand = depth < bounds.maxDepth && !truncated;
    if (!expand && !onAccesses) break;
    const accesses = await accessesOf(src, frontier, work);
    onAccesses?.(accesses, depth);
    if (!expand) break;
    const next: Principal[] = [];
    for (const l of await linksFrom(src, frontier, accesses, cache, work)) {
      if (reached.has(l.to.id)) continue;
      if (reached.size >= bounds.maxNodes) {
        truncated = true;
        break;
      }
      reached.set(l.to.id, { kind: l.to.kind, depth: depth + 1, link: l });
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

type RawHop = Omit<Hop, 'from' | 'to'> & { from: { id: string; kind: NodeKind }; to: { id: string; kind: NodeKind } };

/** Whole edges by accessKey: those under the hops of the paths a search returns. */
type EdgeMap = Map<string, GraphEdge>;

async function edgesFor(src: GraphSource, accesses: ReadonlyArray<Access | null>): Promise<EdgeMap> {
  const wanted = accesses.filter((a): a is Access => a !== null);
  const out: EdgeMap = new Map();
  if (wanted.length > 0) for (const e of await src.edgesOf(wanted)) out.set(accessKey(e), e);
  return out;
}

/** The hops of a chain of links; null when an edge under one is gone since the search read it (no single snapshot on that backend). */
function hopsOf(chain: readonly Link[], edges: EdgeMap): RawHop[] | null {
  const hops: RawHop[] = [];
  for (const l of chain) {
    const edge = l.access ? edges.get(accessKey(l.access)) : null;
    if (edge === undefined) return null;
    hops.push({ from: l.from, to: l.to, via: l.via, resource_id: l.resource_id, mode: l.mode, basis: basisOf(edge), confidence: hopConfidence(edge) });
  }
  return hops;
}

function accessHop(e: GraphEdge): RawHop {
  return { from: { id: e.origin_id, kind: e.origin_kind }, to: { id: e.resource_id, kind: 'resource' }, via: 'access', resource_id: e.resource_id, mode: e.mode, basis: basisOf(e), confidence: hopConfidence(e) };
}

/** The weakest confidence of any observation-only hop; `high` when there is none. */
function confidenceOf(hops: ReadonlyArray<{ confidence: Confidence | null }>): Confidence {
  return hops.reduce<Confidence>((c, h) => (h.confidence ? weakerConfidence(c, h.confidence) : c), 'high');
}

function pathOf(hops: RawHop[], names: Map<string, GraphNode>): AttackPath {
  const ref = (p: { id: string; kind: NodeKind }): NodeRef => ({ kind: names.get(p.id)?.kind ?? p.kind, id: p.id, name: names.get(p.id)?.name ?? null });
  const full = hops.map((h) => ({ ...h, from: ref(h.from), to: ref(h.to) }));
  return { length: full.length, confidence: confidenceOf(full), hops: full };
}

const CONF_ORDER: Record<Confidence, number> = { high: 0, medium: 1, low: 2 };

export interface EscalationResult extends SearchExtent {
  start: NodeRef;
  targets: Array<{ target: NodeRef; path: AttackPath }>;
  /** more targets exist than `limit` returned, or the search was not complete */
  truncated: boolean;
}

/** How many a search found: exact when it was complete, else a lower bound, named as such. */
export type Total = { total: number; total_at_least?: never } | { total_at_least: number; total?: never };

function totalOf(n: number, extent: SearchExtent): Total {
  return extent.complete ? { total: n } : { total_at_least: n };
}

/** Principals an agent can come to act as (beyond its own sessions), each with a shortest path; ranked shortest, then most certain. */
export async function escalation(src: GraphSource, agentId: string, bounds: SearchBounds = DEFAULT_BOUNDS): Promise<EscalationResult> {
  const cache = newCache();
  const work = new Work(bounds.budget);
  const { reached, truncated } = await principalsFrom(src, { id: agentId, kind: 'agent' }, bounds, cache, work);
  const extent = work.extent(truncated);
  // Ranking needs each path's confidence, so the edge under every reaching link.
  const edges = await edgesFor(src, [...reached.values()].map((v) => v.link?.access ?? null));
  const found: Array<{ id: string; kind: OriginKind; hops: RawHop[]; confidence: Confidence }> = [];
  for (const [id, v] of reached) {
    if (id === agentId) continue;
    const chain = chainTo(reached, id);
    // The agent's own sessions act with its own authority: not an escalation.
    if (chain.every((l) => l.via === 'runs')) continue;
    const hops = hopsOf(chain, edges);
    if (hops) found.push({ id, kind: v.kind, hops, confidence: confidenceOf(hops) });
  }
  found.sort((a, b) => a.hops.length - b.hops.length || CONF_ORDER[a.confidence] - CONF_ORDER[b.confidence] || cmp(a.id, b.id));
  const kept = found.slice(0, bounds.limit);
  // Names only for what is returned.
  await fill(src, [agentId, ...kept.flatMap((f) => f.hops.flatMap((h) => [h.from.id, h.to.id]))], cache);
  const targets = kept.map((f) => ({ target: { kind: f.kind, id: f.id, name: cache.nodes.get(f.id)?.name ?? null }, path: pathOf(f.hops, cache.nodes) }));
  return { start: { kind: 'agent', id: agentId, name: cache.nodes.get(agentId)?.name ?? null }, targets, truncated: !extent.complete || found.length > bounds.limit, ...extent };
}

export interface ReachItem {
  resource: NodeRef & { class: ResourceClass | null };
  /** the strongest mode any reached principal holds on it */
  mode: Mode;
  path: AttackPath;
}

export type ReachabilityResult = { start: NodeRef; items: ReachItem[] } & Total & { truncated: boolean } & SearchExtent;

/**
 * Resources an agent can reach, directly or through escalation; per resource the strongest mode,
 * then the shortest path to it. Cut by the budget: the resources of the levels read, the mode the
 * strongest found so far.
 */
export async function reachability(src: GraphSource, agentId: string, bounds: SearchBounds = DEFAULT_BOUNDS): Promise<ReachabilityResult> {
  const cache = newCache();
  const work = new Work(bounds.budget);
  // Per resource (by node number: the search names by id only the resources it returns) the
  // strongest mode, then the least depth, then the least origin, level by level as the search
  // reads each depth's accesses.
  const best = new Map<number, { origin_id: string; mode: Mode; depth: number }>();
  const { reached, truncated } = await principalsFrom(src, { id: agentId, kind: 'agent' }, bounds, cache, work, (accesses, depth) => {
    const level = new Map<number, LinkedAccess>();
    for (const a of accesses) {
      const held = level.get(a.resource_no);
      if (!held || (a.mode === 'rw' && held.mode === 'r') || (a.mode === held.mode && a.origin_id < held.origin_id)) level.set(a.resource_no, a);
    }
    for (const [no, a] of level) {
      const cur = best.get(no);
      if (!cur || (a.mode === 'rw' && cur.mode === 'r')) best.set(no, { origin_id: a.origin_id, mode: a.mode, depth });
    }
  });
  const extent = work.extent(truncated);
  // Shortest first, then by node number (the order the resources were first recorded).
  const ranked = [...best.entries()].sort(([na, a], [nb, b]) => a.depth - b.depth || na - nb);
  const named = await src.resources(ranked.slice(0, bounds.limit).map(([no]) => no));
  // A number no resource of the tenant answers to is not returned (the walk trusts the key; the names check the tenant).
  const kept = ranked.slice(0, bounds.limit).flatMap(([no, b]) => {
    const node = named.get(no);
    return node === undefined ? [] : [{ node, access: { origin_id: b.origin_id, resource_id: node.id, mode: b.mode } }];
  });
  const chains = kept.map(({ access }) => chainTo(reached, access.origin_id));
  const edges = await edgesFor(src, [...kept.map(({ access }) => access), ...chains.flatMap((c) => c.map((l) => l.access))]);
  for (const { node } of kept) cache.nodes.set(node.id, node);
  await fill(src, [agentId, ...chains.flatMap((c) => c.flatMap((l) => [l.from.id, l.to.id]))], cache);
  const items: ReachItem[] = [];
  kept.forEach(({ node, access }, i) => {
    const edge = edges.get(accessKey(access));
    const hops = hopsOf(chains[i] as Link[], edges);
    // Gone since the search read it (no single snapshot on that backend): not reachable this way now.
    if (!edge || !hops) return;
    items.push({ resource: { kind: 'resource', id: node.id, name: node.name, class: node.class }, mode: edge.mode, path: pathOf([...hops, accessHop(edge)], cache.nodes) });
  });
  return { start: { kind: 'agent', id: agentId, name: cache.nodes.get(agentId)?.name ?? null }, items, ...totalOf(ranked.length, extent), truncated: !extent.complete || ranked.length > bounds.limit, ...extent };
}

export interface ExfilItem {
  principal: NodeRef;
  /** the mode of the final access to the resource */
  mode: Mode;
  path: AttackPath;
}

export type ExfilResult = { resource: NodeRef; items: ExfilItem[] } & Total & { truncated: boolean } & SearchExtent;

/** Principals that can come to read a resource, each with a shortest path ending in an access to it; agents first among equals. */
export async function exfil(src: GraphSource, resourceId: string, bounds: SearchBounds = DEFAULT_BOUNDS): Promise<ExfilResult> {
  const cache = newCache();
  const work = new Work(bounds.budget);
  const reached = new Map<string, { kind: OriginKind; depth: number; next: Link | null; access: GraphEdge | null }>();
  const direct = (await work.read((limit) => src.edgesTo([resourceId], limit))).sort((a, b) => cmp(a.origin_id, b.origin_id) || (a.mode === 'rw' ? -1 : 1));
  let frontier: Principal[] = [];
  for (const e of direct) {
    if (reached.has(e.origin_id)) continue;
    reached.set(e.origin_id, { kind: e.origin_kind, depth: 0, next: null, access: e });
    frontier.push({ id: e.origin_id, kind: e.origin_kind });
  }
  let truncated = false;
  for (let depth = 1; depth <= bounds.maxDepth && frontier.length > 0 && !truncated && !work.cut; depth++) {
    const next: Principal[] = [];
    for (const l of await linksTo(src, frontier, cache, work)) {
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
  const extent = work.extent(truncated);
  const kindOrder: Record<string, number> = { agent: 0, session: 1, identity: 2 };
  const ranked = [...reached.entries()].sort(([ia, a], [ib, b]) => a.depth - b.depth || (kindOrder[a.kind] ?? 9) - (kindOrder[b.kind] ?? 9) || cmp(ia, ib));
  const kept = ranked.slice(0, bounds.limit);
  const chains = kept.map(([id]) => {
    const links: Link[] = [];
    for (let cur = reached.get(id); cur?.next; cur = reached.get(cur.next.to.id)) links.push(cur.next);
    return links;
  });
  const edges = await edgesFor(src, chains.flatMap((c) => c.map((l) => l.access)));
  await fill(src, [resourceId, ...kept.map(([id]) => id), ...chains.flatMap((c) => c.map((l) => l.to.id))], cache);
  const items: ExfilItem[] = [];
  kept.forEach(([id, v], i) => {
    const chain = chains[i] as Link[];
    const access = (chain.length > 0 ? reached.get((chain[chain.length - 1] as Link).to.id)?.access : v.access) as GraphEdge;
    const hops = hopsOf(chain, edges);
    if (hops) items.push({ principal: { kind: v.kind, id, name: cache.nodes.get(id)?.name ?? null }, mode: access.mode, path: pathOf([...hops, accessHop(access)], cache.nodes) });
  });
  const r = cache.nodes.get(resourceId);
  return { resource: { kind: 'resource', id: resourceId, name: r?.name ?? null }, items, ...totalOf(ranked.length, extent), truncated: !extent.complete || ranked.length > bounds.limit, ...extent };
}
