/** Exfil: the principals that can come to read a resource. */
import { type Mode, type OriginKind } from './model.js';
import { type GraphEdge, type GraphSource } from './graph-source.js';
import { type NodeRef, type AttackPath, type SearchBounds, DEFAULT_BOUNDS, type SearchExtent, Work } from './search-bounds.js';
import { type Principal, type Link, cmp, newCache, fill, linksTo, edgesFor, hopsOf, accessHop, pathOf } from './path-links.js';
import { totalOf, type Total } from './escalation.js';

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
  const direct = (await work.read((limit) => src.edgesTo([resourceId], limit))).sort(
    (a, b) => cmp(a.origin_id, b.origin_id) || (a.mode === 'rw' ? -1 : 1),
  );
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
  const ranked = [...reached.entries()].sort(
    ([ia, a], [ib, b]) => a.depth - b.depth || (kindOrder[a.kind] ?? 9) - (kindOrder[b.kind] ?? 9) || cmp(ia, ib),
  );
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
    if (hops)
      items.push({
        principal: { kind: v.kind, id, name: cache.nodes.get(id)?.name ?? null },
        mode: access.mode,
        path: pathOf([...hops, accessHop(access)], cache.nodes),
      });
  });
  const r = cache.nodes.get(resourceId);
  return {
    resource: { kind: 'resource', id: resourceId, name: r?.name ?? null },
    items,
    ...totalOf(ranked.length, extent),
    truncated: !extent.complete || ranked.length > bounds.limit,
    ...extent,
  };
}

