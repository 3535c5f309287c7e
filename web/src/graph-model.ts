/** The access map's data as the API answers it, and the nodes it names (no graph library here). */

export interface MapEdge {
  id: string;
  origin_kind: string;
  origin_id: string;
  origin_name: string | null;
  resource_id: string;
  resource_name: string | null;
  mode: string;
  permitted: boolean;
  observed: boolean;
  observed_count: number;
  grant_source: string | null;
  signal_source: string | null;
  confidence: string | null;
  last_seen: string | null;
}

export interface MapNode {
  id: string;
  kind: string;
  name: string;
}

/** The nodes named by a list of edges. */
export function nodesOf(edges: MapEdge[]): Map<string, MapNode> {
  const nodes = new Map<string, MapNode>();
  for (const e of edges) {
    if (!nodes.has(e.origin_id)) nodes.set(e.origin_id, { id: e.origin_id, kind: e.origin_kind, name: e.origin_name ?? e.origin_id.slice(0, 8) });
    if (!nodes.has(e.resource_id)) nodes.set(e.resource_id, { id: e.resource_id, kind: 'resource', name: e.resource_name ?? e.resource_id.slice(0, 8) });
  }
  return nodes;
}

/** The class of an edge: what is known of it, and its drift. */
export function edgeClass(e: MapEdge, drift: Map<string, string>): string {
  const basis = e.permitted && e.observed ? 'both' : e.permitted ? 'permitted-only' : 'observed-only';
  const d = drift.get(e.id);
  return d ? `${basis} drift drift-${d}` : basis;
}


export interface PathHop {
  from: { id: string; kind: string; name: string | null };
  to: { id: string; kind: string; name: string | null };
}

