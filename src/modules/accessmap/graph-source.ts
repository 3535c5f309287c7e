/**
 * What the path algorithms read: batched neighbourhood queries, so a breadth-first search costs a
 * few statements per level rather than one per node. `storeGraphSource` reads one tenant through
 * the Store; `memoryGraphSource` holds a graph in memory (tests, snapshots).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Confidence, Mode, NodeKind, OriginKind, ResourceClass } from './model.js';
import { chunks } from './node-store.js';

/** An access edge as the algorithms see it. */
export interface GraphEdge {
  id: string;
  origin_kind: OriginKind;
  origin_id: string;
  resource_id: string;
  mode: Mode;
  permitted: boolean;
  observed: boolean;
  confidence: Confidence | null;
}

/** A node as the algorithms see it. */
export interface GraphNode {
  id: string;
  kind: NodeKind;
  name: string;
  class: ResourceClass | null;
  /** sessions: their agent; credential resources: the identity they authenticate as */
  parent_id: string | null;
}

export interface GraphSource {
  /** access edges whose origin is one of `ids` */
  edgesFrom(ids: readonly string[]): Promise<GraphEdge[]>;
  /** access edges whose resource is one of `ids` */
  edgesTo(ids: readonly string[]): Promise<GraphEdge[]>;
  /** nodes (agents included) by id; unknown ids are absent */
  nodes(ids: readonly string[]): Promise<Map<string, GraphNode>>;
  /** nodes whose parent is one of `ids` (an agent's sessions, an identity's credentials) */
  children(ids: readonly string[]): Promise<GraphNode[]>;
}

type EdgeRow = { id: string; origin_kind: string; origin_id: string; resource_id: string; mode: string; permitted: number; observed_count: number | string; confidence: string };

function edgeOf(r: EdgeRow): GraphEdge {
  return {
    id: r.id,
    origin_kind: r.origin_kind as OriginKind,
    origin_id: r.origin_id,
    resource_id: r.resource_id,
    mode: r.mode as Mode,
    permitted: Number(r.permitted) === 1,
    observed: Number(r.observed_count) > 0,
    confidence: r.confidence === '' ? null : (r.confidence as Confidence),
  };
}

const EDGE_COLS = ['id', 'origin_kind', 'origin_id', 'resource_id', 'mode', 'permitted', 'observed_count', 'confidence'] as const;

/** A GraphSource over one tenant inside an open transaction (one consistent snapshot on Postgres). */
export function storeGraphSource(tx: Transaction<Database>, tenant: string): GraphSource {
  return {
    async edgesFrom(ids) {
      const out: GraphEdge[] = [];
      for (const c of chunks([...new Set(ids)], 500)) {
        const rows = await tx.selectFrom('access_edges').select(EDGE_COLS).where('tenant_id', '=', tenant).where('origin_id', 'in', c).execute();
        for (const r of rows) out.push(edgeOf(r));
      }
      return out;
    },
    async edgesTo(ids) {
      const out: GraphEdge[] = [];
      for (const c of chunks([...new Set(ids)], 500)) {
        const rows = await tx.selectFrom('access_edges').select(EDGE_COLS).where('tenant_id', '=', tenant).where('resource_id', 'in', c).execute();
        for (const r of rows) out.push(edgeOf(r));
      }
      return out;
    },
    async nodes(ids) {
      const out = new Map<string, GraphNode>();
      for (const c of chunks([...new Set(ids)], 500)) {
        for (const a of await tx.selectFrom('agents').select(['id', 'name']).where('tenant_id', '=', tenant).where('id', 'in', c).execute()) {
          out.set(a.id, { id: a.id, kind: 'agent', name: a.name, class: null, parent_id: null });
        }
        for (const n of await tx.selectFrom('access_nodes').select(['id', 'kind', 'name', 'class', 'parent_id']).where('tenant_id', '=', tenant).where('id', 'in', c).execute()) {
          out.set(n.id, { id: n.id, kind: n.kind as NodeKind, name: n.name, class: n.class === '' ? null : (n.class as ResourceClass), parent_id: n.parent_id });
        }
      }
      return out;
    },
    async children(ids) {
      const out: GraphNode[] = [];
      for (const c of chunks([...new Set(ids)], 500)) {
        for (const n of await tx.selectFrom('access_nodes').select(['id', 'kind', 'name', 'class', 'parent_id']).where('tenant_id', '=', tenant).where('parent_id', 'in', c).execute()) {
          out.push({ id: n.id, kind: n.kind as NodeKind, name: n.name, class: n.class === '' ? null : (n.class as ResourceClass), parent_id: n.parent_id });
        }
      }
      return out;
    },
  };
}

/** A GraphSource over arrays held in memory. */
export function memoryGraphSource(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): GraphSource {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const from = new Map<string, GraphEdge[]>();
  const to = new Map<string, GraphEdge[]>();
  const kids = new Map<string, GraphNode[]>();
  for (const e of edges) {
    from.set(e.origin_id, [...(from.get(e.origin_id) ?? []), e]);
    to.set(e.resource_id, [...(to.get(e.resource_id) ?? []), e]);
  }
  for (const n of nodes) if (n.parent_id) kids.set(n.parent_id, [...(kids.get(n.parent_id) ?? []), n]);
  const uniq = (ids: readonly string[]) => [...new Set(ids)];
  return {
    edgesFrom: async (ids) => uniq(ids).flatMap((id) => from.get(id) ?? []),
    edgesTo: async (ids) => uniq(ids).flatMap((id) => to.get(id) ?? []),
    nodes: async (ids) => new Map(uniq(ids).flatMap((id) => (byId.has(id) ? [[id, byId.get(id) as GraphNode] as const] : []))),
    children: async (ids) => uniq(ids).flatMap((id) => kids.get(id) ?? []),
  };
}
