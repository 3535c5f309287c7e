/** Reachability: the resources an agent can reach, directly or through escalation. */
import { type Mode, type ResourceClass } from './model.js';
import { accessKey, type GraphSource, type LinkedAccess } from './graph-source.js';
import { type NodeRef, type AttackPath, type SearchBounds, DEFAULT_BOUNDS, type SearchExtent, Work } from './search-bounds.js';
import { type Link, newCache, fill, principalsFrom, chainTo, edgesFor, hopsOf, accessHop, pathOf } from './path-links.js';
import { totalOf, type Total } from './escalation.js';

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
      if (!held || (a.mode === 'rw' && held.mode === 'r') || (a.mode === held.mode && a.origin_id < held.origin_id))
        level.set(a.resource_no, a);
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
    items.push({
      resource: { kind: 'resource', id: node.id, name: node.name, class: node.class },
      mode: edge.mode,
      path: pathOf([...hops, accessHop(edge)], cache.nodes),
    });
  });
  return {
    start: { kind: 'agent', id: agentId, name: cache.nodes.get(agentId)?.name ?? null },
    items,
    ...totalOf(ranked.length, extent),
    truncated: !extent.complete || ranked.length > bounds.limit,
    ...extent,
  };
}
