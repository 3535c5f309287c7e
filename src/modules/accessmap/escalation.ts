/** Escalation: the principals an agent can come to act as, each with a shortest path. */
import { type Confidence, type OriginKind } from './model.js';
import { type GraphSource } from './graph-source.js';
import { type NodeRef, type AttackPath, type SearchBounds, DEFAULT_BOUNDS, type SearchExtent, Work } from './search-bounds.js';
import {
  cmp,
  newCache,
  fill,
  principalsFrom,
  chainTo,
  type RawHop,
  edgesFor,
  hopsOf,
  confidenceOf,
  pathOf,
  CONF_ORDER,
} from './path-links.js';

export interface EscalationResult extends SearchExtent {
  start: NodeRef;
  targets: Array<{ target: NodeRef; path: AttackPath }>;
  /** more targets exist than `limit` returned, or the search was not complete */
  truncated: boolean;
}

/** How many a search found: exact when it was complete, else a lower bound, named as such. */
export type Total = { total: number; total_at_least?: never } | { total_at_least: number; total?: never };

export function totalOf(n: number, extent: SearchExtent): Total {
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
  const targets = kept.map((f) => ({
    target: { kind: f.kind, id: f.id, name: cache.nodes.get(f.id)?.name ?? null },
    path: pathOf(f.hops, cache.nodes),
  }));
  return {
    start: { kind: 'agent', id: agentId, name: cache.nodes.get(agentId)?.name ?? null },
    targets,
    truncated: !extent.complete || found.length > bounds.limit,
    ...extent,
  };
}
