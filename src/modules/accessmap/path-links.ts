/**
 * The links one principal acts as another through (`runs`, `credential`, `writes`) and the hops of a found path; shared by the three
 * searches.
 */
import { weakerConfidence, type Confidence, type Mode, type NodeKind, type OriginKind } from './model.js';
import { accessKey, type Access, type GraphEdge, type GraphNode, type GraphSource, type LinkedAccess } from './graph-source.js';
import { type HopVia, type HopBasis, type NodeRef, type Hop, type AttackPath, type SearchBounds, Work } from './search-bounds.js';

export interface Principal {
  id: string;
  kind: OriginKind;
}

export interface Link {
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
  return (
    cmp(a.from.id, b.from.id) ||
    VIA_ORDER[a.via] - VIA_ORDER[b.via] ||
    cmp(a.resource_id ?? '', b.resource_id ?? '') ||
    cmp(a.to.id, b.to.id) ||
    cmp(a.mode ?? '', b.mode ?? '')
  );
}

export function cmp(a: string, b: string): number {
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

export function newCache(): SearchCache {
  return { nodes: new Map() };
}

/** Loads the nodes of `ids` not yet in `cache`. */
export async function fill(src: GraphSource, ids: Iterable<string>, cache: SearchCache): Promise<void> {
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
async function linksFrom(
  src: GraphSource,
  frontier: readonly Principal[],
  accesses: readonly LinkedAccess[],
  cache: SearchCache,
  work: Work,
): Promise<Link[]> {
  const links: Link[] = [];
  const agents = frontier.filter((p) => p.kind === 'agent').map((p) => p.id);
  if (agents.length > 0) {
    for (const s of await src.children(agents)) {
      if (s.kind === 'session' && s.parent_id)
        links.push({
          from: { id: s.parent_id, kind: 'agent' },
          to: { id: s.id, kind: 'session' },
          via: 'runs',
          resource_id: null,
          mode: null,
          access: null,
        });
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
    if (r.class === 'credential' && r.parent_id)
      links.push({ from, to: { id: r.parent_id, kind: 'identity' }, via: 'credential', resource_id: r.id, mode: a.mode, access });
    if (a.mode === 'rw' && controls(r)) writers.set(r.id, [...(writers.get(r.id) ?? []), access]);
  }
  if (writers.size > 0) {
    for (const rd of await work.read((limit) => src.edgesTo([...writers.keys()], limit))) {
      for (const w of writers.get(rd.resource_id) ?? []) {
        if (rd.origin_id === w.origin_id) continue;
        links.push({
          from: { id: w.origin_id, kind: kindOf.get(w.origin_id) as OriginKind },
          to: { id: rd.origin_id, kind: rd.origin_kind },
          via: 'writes',
          resource_id: rd.resource_id,
          mode: 'rw',
          access: w,
        });
      }
    }
  }
  return links.sort(linkOrder);
}

/** The links arriving at `frontier`, in a deterministic order (the reverse of `linksFrom`), within the budget. */
export async function linksTo(src: GraphSource, frontier: readonly Principal[], cache: SearchCache, work: Work): Promise<Link[]> {
  const links: Link[] = [];
  const sessions = frontier.filter((p) => p.kind === 'session').map((p) => p.id);
  await fill(src, sessions, cache);
  for (const id of sessions) {
    const s = cache.nodes.get(id);
    if (s?.kind === 'session' && s.parent_id)
      links.push({
        from: { id: s.parent_id, kind: 'agent' },
        to: { id, kind: 'session' },
        via: 'runs',
        resource_id: null,
        mode: null,
        access: null,
      });
  }
  const identities = frontier.filter((p) => p.kind === 'identity').map((p) => p.id);
  if (identities.length > 0) {
    const creds = (await src.children(identities)).filter((n) => n.kind === 'resource' && n.class === 'credential');
    for (const c of creds) cache.nodes.set(c.id, c);
    if (creds.length > 0) {
      for (const e of await work.read((limit) => src.edgesTo(creds.map((c) => c.id), limit))) {
        const c = cache.nodes.get(e.resource_id) as GraphNode;
        links.push({
          from: { id: e.origin_id, kind: e.origin_kind },
          to: { id: c.parent_id as string, kind: 'identity' },
          via: 'credential',
          resource_id: c.id,
          mode: e.mode,
          access: e,
        });
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
        links.push({
          from: { id: w.origin_id, kind: w.origin_kind },
          to: { id: rd.origin_id, kind: kindOf.get(rd.origin_id) as OriginKind },
          via: 'writes',
          resource_id: w.resource_id,
          mode: 'rw',
          access: w,
        });
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
export async function principalsFrom(
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

export function chainTo(reached: Map<string, Visit>, id: string): Link[] {
  const links: Link[] = [];
  for (let v = reached.get(id); v?.link; v = reached.get(v.link.from.id)) links.unshift(v.link);
  return links;
}

export type RawHop = Omit<Hop, 'from' | 'to'> & { from: { id: string; kind: NodeKind }; to: { id: string; kind: NodeKind } };

/** Whole edges by accessKey: those under the hops of the paths a search returns. */
type EdgeMap = Map<string, GraphEdge>;

export async function edgesFor(src: GraphSource, accesses: ReadonlyArray<Access | null>): Promise<EdgeMap> {
  const wanted = accesses.filter((a): a is Access => a !== null);
  const out: EdgeMap = new Map();
  if (wanted.length > 0) for (const e of await src.edgesOf(wanted)) out.set(accessKey(e), e);
  return out;
}

/** The hops of a chain of links; null when an edge under one is gone since the search read it (no single snapshot on that backend). */
export function hopsOf(chain: readonly Link[], edges: EdgeMap): RawHop[] | null {
  const hops: RawHop[] = [];
  for (const l of chain) {
    const edge = l.access ? edges.get(accessKey(l.access)) : null;
    if (edge === undefined) return null;
    hops.push({
      from: l.from,
      to: l.to,
      via: l.via,
      resource_id: l.resource_id,
      mode: l.mode,
      basis: basisOf(edge),
      confidence: hopConfidence(edge),
    });
  }
  return hops;
}

export function accessHop(e: GraphEdge): RawHop {
  return {
    from: { id: e.origin_id, kind: e.origin_kind },
    to: { id: e.resource_id, kind: 'resource' },
    via: 'access',
    resource_id: e.resource_id,
    mode: e.mode,
    basis: basisOf(e),
    confidence: hopConfidence(e),
  };
}

/** The weakest confidence of any observation-only hop; `high` when there is none. */
export function confidenceOf(hops: ReadonlyArray<{ confidence: Confidence | null }>): Confidence {
  return hops.reduce<Confidence>((c, h) => (h.confidence ? weakerConfidence(c, h.confidence) : c), 'high');
}

export function pathOf(hops: RawHop[], names: Map<string, GraphNode>): AttackPath {
  const ref = (p: { id: string; kind: NodeKind }): NodeRef => ({
    kind: names.get(p.id)?.kind ?? p.kind,
    id: p.id,
    name: names.get(p.id)?.name ?? null,
  });
  const full = hops.map((h) => ({ ...h, from: ref(h.from), to: ref(h.to) }));
  return { length: full.length, confidence: confidenceOf(full), hops: full };
}

export const CONF_ORDER: Record<Confidence, number> = { high: 0, medium: 1, low: 2 };
