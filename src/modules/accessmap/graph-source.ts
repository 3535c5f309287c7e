/**
 * What the path algorithms read: batched neighbourhood queries, so a breadth-first search costs a
 * few statements per level rather than one per node. A search walks accesses (origin, resource,
 * mode), which the store reads from the edge key's index alone, and loads whole edges and nodes
 * only where a path goes through them or ends. `storeGraphSource` reads one tenant through
 * the Store; `memoryGraphSource` holds a graph in memory (tests, snapshots).
 */
import { sql, type Transaction } from 'kysely';
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

/** What a search walks: one access edge reduced to its ends and mode. */
export interface Access {
  origin_id: string;
  resource_id: string;
  mode: Mode;
}

/** Per resource, the smallest origin among some principals that holds it `rw`, and that holds it `r`. */
export interface ResourceHolders {
  resource_id: string;
  rw: string | null;
  r: string | null;
}

export interface GraphSource {
  /** the accesses whose origin is one of `ids` onto linking resources (credential, config, code), with the resource */
  linkingAccessesFrom(ids: readonly string[]): Promise<Array<Access & { resource: GraphNode }>>;
  /** every resource some origin among `ids` can access, with its holders (one row per resource) */
  holdersFrom(ids: readonly string[]): Promise<ResourceHolders[]>;
  /** the access edges of `accesses` (each by origin, resource and mode); absent ones are skipped */
  edgesOf(accesses: readonly Access[]): Promise<GraphEdge[]>;
  /** access edges whose resource is one of `ids` */
  edgesTo(ids: readonly string[]): Promise<GraphEdge[]>;
  /** nodes (agents included) by id; unknown ids are absent */
  nodes(ids: readonly string[]): Promise<Map<string, GraphNode>>;
  /** nodes whose parent is one of `ids` (an agent's sessions, an identity's credentials) */
  children(ids: readonly string[]): Promise<GraphNode[]>;
}

/** Resource classes that link principals (attack-paths.ts); the rest (`data`) only ends a path. */
export const LINKING_CLASSES = ['credential', 'config', 'code'] as const;

/** `n.class in (…LINKING_CLASSES)`: the predicate of access_nodes_linking_idx (migration 005), as literals (a bound parameter would not prove it). */
const LINKING_PREDICATE = sql<boolean>`n.class in (${sql.raw(LINKING_CLASSES.map((c) => `'${c}'`).join(', '))})`;

function minId(a: string | null, b: string | null): string | null {
  return a === null ? b : b === null || a < b ? a : b;
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

/** `origin|resource|mode`: one access edge. */
export function accessKey(a: Access): string {
  return `${a.origin_id}|${a.resource_id}|${a.mode}`;
}

// Index seeks per `edgesOf` statement (origins × resources), and so at most this many parameters.
const PAIRS_PER_QUERY = 2_000;

const EDGE_COLS = ['id', 'origin_kind', 'origin_id', 'resource_id', 'mode', 'permitted', 'observed_count', 'confidence'] as const;
const NODE_COLS = ['id', 'kind', 'name', 'class', 'parent_id'] as const;

function nodeOf(n: { id: string; kind: string; name: string; class: string; parent_id: string | null }): GraphNode {
  return { id: n.id, kind: n.kind as NodeKind, name: n.name, class: n.class === '' ? null : (n.class as ResourceClass), parent_id: n.parent_id };
}

/** A GraphSource over one tenant inside an open transaction. */
export function storeGraphSource(tx: Transaction<Database>, tenant: string): GraphSource {
  const edges = tx.selectFrom('access_edges').where('tenant_id', '=', tenant);
  return {
    async linkingAccessesFrom(ids) {
      const out: Array<Access & { resource: GraphNode }> = [];
      // Walks the key (origin first) and probes access_nodes_linking_idx, which holds only the few
      // linking resources: the database skips every other access without returning it. `cross join`
      // keeps SQLite's loop in that order (it would otherwise walk every linking resource).
      for (const c of chunks([...new Set(ids)], 500)) {
        const rows = await sql<{ origin_id: string; resource_id: string; mode: Mode; kind: string; name: string; class: string; parent_id: string | null }>`
          select e.origin_id, e.resource_id, e.mode, n.kind, n.name, n.class, n.parent_id
          from access_edges e cross join access_nodes n
          where e.tenant_id = ${tenant} and e.origin_id in (${sql.join(c)}) and n.tenant_id = e.tenant_id and n.id = e.resource_id and ${LINKING_PREDICATE}`.execute(tx);
        for (const r of rows.rows) out.push({ origin_id: r.origin_id, resource_id: r.resource_id, mode: r.mode, resource: nodeOf({ id: r.resource_id, kind: r.kind, name: r.name, class: r.class, parent_id: r.parent_id }) });
      }
      return out;
    },
    async holdersFrom(ids) {
      // Aggregated in the database from the key alone: one row per resource, not one per access.
      // Materialized, or SQLite walks (tenant, resource, id) for the grouping order, i.e. every edge.
      // Origins compare as text (Postgres 15 has no min(uuid)); canonical lowercase ids order alike.
      const out = new Map<string, ResourceHolders>();
      for (const c of chunks([...new Set(ids)], 5_000)) {
        const rows = await sql<ResourceHolders>`
          with a as materialized (select origin_id, resource_id, mode from access_edges where tenant_id = ${tenant} and origin_id in (${sql.join(c)}))
          select resource_id,
                 min(case when mode = 'rw' then cast(origin_id as text) end) as rw,
                 min(case when mode = 'r' then cast(origin_id as text) end) as r
          from a group by resource_id`.execute(tx);
        for (const h of rows.rows) {
          const cur = out.get(h.resource_id);
          if (!cur) out.set(h.resource_id, h);
          else out.set(h.resource_id, { resource_id: h.resource_id, rw: minId(cur.rw, h.rw), r: minId(cur.r, h.r) });
        }
      }
      return [...out.values()];
    },
    async edgesOf(accesses) {
      const wanted = new Set(accesses.map(accessKey));
      const byOrigin = new Map<string, Set<string>>();
      for (const a of accesses) byOrigin.set(a.origin_id, (byOrigin.get(a.origin_id) ?? new Set()).add(a.resource_id));
      const out: GraphEdge[] = [];
      // `origin in (…) and resource in (…)` seeks every pair of the two lists in the key: groups of
      // origins whose resources together stay few keep that product small.
      let origins: string[] = [];
      let resources = new Set<string>();
      const flush = async () => {
        if (origins.length === 0) return;
        for (const row of await edges.select(EDGE_COLS).where('origin_id', 'in', origins).where('resource_id', 'in', [...resources]).execute()) {
          const e = edgeOf(row);
          if (wanted.has(accessKey(e))) out.push(e);
        }
        origins = [];
        resources = new Set();
      };
      for (const [origin, rs] of byOrigin) {
        if (origins.length > 0 && (origins.length + 1) * (resources.size + rs.size) > PAIRS_PER_QUERY) await flush();
        origins.push(origin);
        for (const r of rs) resources.add(r);
      }
      await flush();
      return out;
    },
    async edgesTo(ids) {
      const out: GraphEdge[] = [];
      for (const c of chunks([...new Set(ids)], 500)) for (const r of await edges.select(EDGE_COLS).where('resource_id', 'in', c).execute()) out.push(edgeOf(r));
      return out;
    },
    async nodes(ids) {
      const out = new Map<string, GraphNode>();
      for (const c of chunks([...new Set(ids)], 500)) {
        for (const a of await tx.selectFrom('agents').select(['id', 'name']).where('tenant_id', '=', tenant).where('id', 'in', c).execute()) {
          out.set(a.id, { id: a.id, kind: 'agent', name: a.name, class: null, parent_id: null });
        }
        for (const n of await tx.selectFrom('access_nodes').select(NODE_COLS).where('tenant_id', '=', tenant).where('id', 'in', c).execute()) out.set(n.id, nodeOf(n));
      }
      return out;
    },
    async children(ids) {
      const out: GraphNode[] = [];
      for (const c of chunks([...new Set(ids)], 500)) for (const n of await tx.selectFrom('access_nodes').select(NODE_COLS).where('tenant_id', '=', tenant).where('parent_id', 'in', c).execute()) out.push(nodeOf(n));
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
  const linking = (n: GraphNode | undefined): n is GraphNode => n?.kind === 'resource' && (LINKING_CLASSES as readonly (string | null)[]).includes(n.class);
  return {
    linkingAccessesFrom: async (ids) =>
      uniq(ids).flatMap((id) => (from.get(id) ?? []).flatMap((e) => {
        const r = byId.get(e.resource_id);
        return linking(r) ? [{ origin_id: e.origin_id, resource_id: e.resource_id, mode: e.mode, resource: r }] : [];
      })),
    holdersFrom: async (ids) => {
      const out = new Map<string, ResourceHolders>();
      for (const e of uniq(ids).flatMap((id) => from.get(id) ?? [])) {
        const h = out.get(e.resource_id) ?? { resource_id: e.resource_id, rw: null, r: null };
        h[e.mode] = minId(h[e.mode], e.origin_id);
        out.set(e.resource_id, h);
      }
      return [...out.values()];
    },
    edgesOf: async (accesses) => {
      const wanted = new Set(accesses.map(accessKey));
      return uniq(accesses.map((a) => a.origin_id)).flatMap((id) => (from.get(id) ?? []).filter((e) => wanted.has(accessKey(e))));
    },
    edgesTo: async (ids) => uniq(ids).flatMap((id) => to.get(id) ?? []),
    nodes: async (ids) => new Map(uniq(ids).flatMap((id) => (byId.has(id) ? [[id, byId.get(id) as GraphNode] as const] : []))),
    children: async (ids) => uniq(ids).flatMap((id) => kids.get(id) ?? []),
  };
}
