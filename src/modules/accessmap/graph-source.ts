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
import type { SqliteHandle, Store } from '../../store/store.js';
import { chunks } from './node-store.js';
import { foldRecent } from './recent-edges.js';
import { knownNumbers } from './node-numbers.js';

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

/** An access as a search reads it: with its resource when that resource links principals (credential, config, code). */
export interface LinkedAccess extends Access {
  resource: GraphNode | null;
}

/**
 * The reads that walk edges take `limit`, the edges the search may still examine (its work budget,
 * attack-paths.ts): they answer at most that many, in a fixed order both sources share, so the
 * database stops where the budget does and a cut search answers alike on every backend. The order
 * is by node number (node-numbers.ts), the order of access_edges' indexes.
 */
export interface GraphSource {
  /** the accesses whose origin is one of `ids`, ordered by origin number, resource number, mode; at most `limit` */
  accessesFrom(ids: readonly string[], limit: number): Promise<LinkedAccess[]>;
  /** the access edges of `accesses` (each by origin, resource and mode); absent ones are skipped */
  edgesOf(accesses: readonly Access[]): Promise<GraphEdge[]>;
  /** access edges whose resource is one of `ids`, ordered by resource number, edge id; at most `limit` */
  edgesTo(ids: readonly string[], limit: number): Promise<GraphEdge[]>;
  /** nodes (agents included) by id; unknown ids are absent */
  nodes(ids: readonly string[]): Promise<Map<string, GraphNode>>;
  /** nodes whose parent is one of `ids` (an agent's sessions, an identity's credentials) */
  children(ids: readonly string[]): Promise<GraphNode[]>;
}

/** Resource classes that link principals (attack-paths.ts); the rest (`data`) only ends a path. */
export const LINKING_CLASSES = ['credential', 'config', 'code'] as const;

/** `n.class in (…LINKING_CLASSES)`: the predicate of access_nodes_linking_idx (migration 005), as literals (a bound parameter would not prove it). */
const LINKING_PREDICATE = sql<boolean>`n.class in (${sql.raw(LINKING_CLASSES.map((c) => `'${c}'`).join(', '))})`;

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

/**
 * A GraphSource over one tenant inside an open transaction. It keeps the node numbers it has seen
 * (a search meets the same nodes again), so translating ids costs one lookup per level at most.
 */
export function storeGraphSource(tx: Transaction<Database>, tenant: string, db?: SqliteHandle): GraphSource {
  const edges = tx.selectFrom('access_edges').where('tenant_id', '=', tenant);
  const seen = new Map<string, number>();
  const idOf = new Map<number, string>();
  /** numbers of those of `ids` that have one, ascending */
  const numbers = async (ids: Iterable<string>): Promise<number[]> => {
    const all = [...new Set(ids)];
    const missing = all.filter((id) => !seen.has(id));
    if (missing.length > 0) {
      for (const [id, no] of await knownNumbers(tx, db, tenant, missing)) {
        seen.set(id, no);
        idOf.set(no, id);
      }
    }
    return all.flatMap((id) => (seen.has(id) ? [seen.get(id) as number] : [])).sort((a, b) => a - b);
  };
  return {
    async accessesFrom(ids, limit) {
      const out: LinkedAccess[] = [];
      // Walks the key alone (numbers and mode: in key order, so `limit` stops the walk), names
      // each resource from access_node_numbers (a rowid seek in a table of nodes, not of edges;
      // it also holds the walk to the tenant) and probes access_nodes_linking_idx, which holds
      // only the few linking resources.
      for (const c of chunks(await numbers(ids), 500)) {
        if (out.length >= limit) break;
        const rows = await sql<{ origin_no: number | string; resource_no: number | string; resource_id: string; mode: Mode; kind: string | null; name: string; class: string; parent_id: string | null }>`
          select e.origin_no, e.resource_no, rn.id as resource_id, e.mode, n.kind, n.name, n.class, n.parent_id
          from access_edges e
          join access_node_numbers rn on rn.no = e.resource_no and rn.tenant_id = ${tenant}
          left join access_nodes n on n.tenant_id = rn.tenant_id and n.id = rn.id and ${LINKING_PREDICATE}
          where e.origin_no in (${sql.join(c)})
          order by e.origin_no, e.resource_no, e.mode limit ${limit - out.length}`.execute(tx);
        for (const r of rows.rows) {
          const rno = Number(r.resource_no);
          seen.set(r.resource_id, rno);
          idOf.set(rno, r.resource_id);
          const resource = r.kind === null ? null : nodeOf({ id: r.resource_id, kind: r.kind, name: r.name, class: r.class, parent_id: r.parent_id });
          out.push({ origin_id: idOf.get(Number(r.origin_no)) as string, resource_id: r.resource_id, mode: r.mode, resource });
        }
      }
      return out;
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
        const [o, r] = [await numbers(origins), await numbers(resources)];
        if (o.length === 0 || r.length === 0) return void ((origins = []), (resources = new Set()));
        // No tenant test in SQL: the numbers are this tenant's (looked up under it), and a tenant
        // test beside two IN lists led SQLite, which keeps no statistics, onto (tenant_id, id) and
        // a walk of every edge of the tenant. Row-level security still applies on PostgreSQL.
        for (const row of await tx.selectFrom('access_edges').select(EDGE_COLS).where('origin_no', 'in', o).where('resource_no', 'in', r).execute()) {
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
    async edgesTo(ids, limit) {
      const out: GraphEdge[] = [];
      // (resource number, id) order: the index's own, so `limit` stops the walk.
      for (const c of chunks(await numbers(ids), 500)) {
        if (out.length >= limit) break;
        for (const r of await edges.select(EDGE_COLS).where('resource_no', 'in', c).orderBy('resource_no').orderBy('id').limit(limit - out.length).execute()) out.push(edgeOf(r));
      }
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

/** `storeGraphSource` after folding the recent level (recent-edges.ts), so a search sees every committed observation. */
export async function foldedGraphSource(store: Store, tx: Transaction<Database>, tenant: string): Promise<GraphSource> {
  await foldRecent(store, tx);
  return storeGraphSource(tx, tenant, store.sqliteHandle?.(tx));
}

/**
 * A GraphSource over arrays held in memory. `numberOf` gives node numbers, which order the edge
 * reads as in the store; by default nodes are numbered in id order (as migration 9 numbers
 * existing nodes, and as a batch numbers its new ones).
 */
export function memoryGraphSource(nodes: readonly GraphNode[], edges: readonly GraphEdge[], numberOf?: (id: string) => number): GraphSource {
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
  const rank = new Map([...new Set([...nodes.map((n) => n.id), ...edges.flatMap((e) => [e.origin_id, e.resource_id])])].sort().map((id, i) => [id, i + 1]));
  const no = numberOf ?? ((id: string) => rank.get(id) as number);
  // The stores' `order by` of those columns, column by column (numbers, then canonical lowercase UUIDs).
  const byKey =
    <T>(key: (x: T) => Array<string | number>) =>
    (a: T, b: T): number => {
      const [ka, kb] = [key(a), key(b)];
      for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return (ka[i] as string | number) < (kb[i] as string | number) ? -1 : 1;
      return 0;
    };
  return {
    accessesFrom: async (ids, limit) =>
      uniq(ids)
        .flatMap((id) => from.get(id) ?? [])
        .sort(byKey((e) => [no(e.origin_id), no(e.resource_id), e.mode]))
        .slice(0, limit)
        .map((e) => {
          const r = byId.get(e.resource_id);
          return { origin_id: e.origin_id, resource_id: e.resource_id, mode: e.mode, resource: linking(r) ? r : null };
        }),
    edgesOf: async (accesses) => {
      const wanted = new Set(accesses.map(accessKey));
      return uniq(accesses.map((a) => a.origin_id)).flatMap((id) => (from.get(id) ?? []).filter((e) => wanted.has(accessKey(e))));
    },
    edgesTo: async (ids, limit) => uniq(ids).flatMap((id) => to.get(id) ?? []).sort(byKey((e) => [no(e.resource_id), e.id])).slice(0, limit),
    nodes: async (ids) => new Map(uniq(ids).flatMap((id) => (byId.has(id) ? [[id, byId.get(id) as GraphNode] as const] : []))),
    children: async (ids) => uniq(ids).flatMap((id) => kids.get(id) ?? []),
  };
}
