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
import type { SqliteHandle, SqliteStatement, Store } from '../../store/store.js';
import { linkingNodes } from './linking-set.js';
import { chunks } from './node-store.js';
import { numbersOf, tenantCheck } from './node-lookup.js';
import { foldRecent } from './recent-edges.js';

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
 * database stops where the budget does and a cut search answers alike on every backend.
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

/** origin number, resource number, resource id, mode, and the resource's id again when it links principals (else null). */
type AccessRow = [origin_no: number, resource_no: number, resource_id: string, mode: Mode, linking: string | null];

/**
 * The accesses of `origins` (by number, ascending) in key order, at most `limit`, with the
 * resource's node when it links principals, through the query builder (Postgres): chunks of 500
 * origins, the resource's row read in the join (its id, and its class, name and parent when it
 * links). Reading only its id and the linking rows afterwards, as SQLite does, cost Postgres a
 * statement more per level (a bench run at 1,000,000 edges: reachability p95 139 ms against 106
 * ms, one run each), so it keeps the join.
 */
async function accessesThroughBuilder(tx: Transaction<Database>, tenant: string, origins: ReadonlyArray<readonly [no: number, id: string]>, limit: number, memo: Map<string, number>): Promise<LinkedAccess[]> {
  const out: LinkedAccess[] = [];
  const idOf = new Map(origins.map(([no, id]) => [no, id]));
  for (const c of chunks(origins.map(([no]) => no), 500)) {
    if (out.length >= limit) break;
    const rows = await sql<{ origin_no: string | number; resource_no: string | number; resource_id: string; mode: Mode; kind: string; name: string; class: string; parent_id: string | null }>`
      select e.origin_no, e.resource_no, n.id as resource_id, e.mode, n.kind, n.name, n.class, n.parent_id
      from access_edges e join access_nodes n on n.no = e.resource_no and n.tenant_id = ${tenant}
      where e.tenant_id = ${tenant} and e.origin_no in (${sql.join(c)})
      order by e.origin_no, e.resource_no, e.mode limit ${limit - out.length}`.execute(tx);
    for (const r of rows.rows) {
      memo.set(r.resource_id, Number(r.resource_no));
      const linking = (LINKING_CLASSES as readonly string[]).includes(r.class);
      const resource = linking ? nodeOf({ id: r.resource_id, kind: r.kind, name: r.name, class: r.class, parent_id: r.parent_id }) : null;
      out.push({ origin_id: idOf.get(Number(r.origin_no)) as string, resource_id: r.resource_id, mode: r.mode, resource });
    }
  }
  return out;
}

/**
 * The accesses of `origins` (numbers, ascending) in key order, at most `limit`, on SQLite's own
 * connection: one statement prepared once per connection that reads the origins from a JSON array
 * (`json_each`; SQLite walks the key `(origin_no, resource_no, mode)` seek by seek in order, no
 * sort) and answers arrays, not objects. The hot loop of every path search. The resource's id is
 * read from its row through `access_nodes_no_key`, with the tenant checked on that row (a seek per
 * access: two thirds of the walk, docs/accessmap.md "Node numbers on `main`"). Which
 * resources link principals comes from the tenant's linking resources held in memory (`linking`,
 * linking-set.ts); without them (turned off, or a tenant past the cap) the row's class says so and
 * the row carries the resource's id again when it links (docs/accessmap.md "Queries").
 */
function sqliteAccessRows(db: SqliteHandle, tenant: string, origins: readonly number[], limit: number): { rows: AccessRow[]; linking?: ReadonlyMap<string, GraphNode> } {
  let s = accessStatements.get(db);
  if (s === undefined) {
    const walk = (fourth: string) =>
      db
        .prepare(
          // CROSS JOIN keeps the key walk as the outer loop (SQLite never reorders it), and the
          // unary + keeps the tenant a check on the node's row, not an index to start from.
          `select e.origin_no, e.resource_no, n.id, e.mode, ${fourth}
           from access_edges e cross join access_nodes n on n.no = e.resource_no and +n.tenant_id = ?
           where e.origin_no in (select value from json_each(?))
           order by e.origin_no, e.resource_no, e.mode limit ?`,
        )
        .raw(true);
    s = { probe: walk(`case when n.class in (${LINKING_CLASSES.map((c) => `'${c}'`).join(', ')}) then n.id end`), walk: walk('null') };
    accessStatements.set(db, s);
  }
  const linking = linkingNodes(db, tenant);
  if (linking === undefined) return { rows: s.probe.all(tenant, JSON.stringify(origins), limit) as AccessRow[] };
  return { rows: s.walk.all(tenant, JSON.stringify(origins), limit) as AccessRow[], linking };
}

const accessStatements = new WeakMap<SqliteHandle, { probe: SqliteStatement; walk: SqliteStatement }>();

/**
 * A GraphSource over one tenant inside an open transaction. On SQLite pass the transaction's
 * connection (`store.sqliteHandle(tx)`): the accesses a search walks are then read with a
 * statement prepared once (see `sqliteAccessRows`). Edges are sought by node number (migration
 * 10); the numbers of the ids a search asks about are looked up once and remembered for the
 * length of the source (numbers never change), and the walk tells it those of the resources it meets.
 */
export function storeGraphSource(tx: Transaction<Database>, tenant: string, db?: SqliteHandle): GraphSource {
  const edges = tx.selectFrom('access_edges').where(tenantCheck('tenant_id', tenant));
  const memo = new Map<string, number>();
  /** [number, id] of the nodes among `ids`, by number; unknown ids are left out. */
  const numbered = async (ids: readonly string[]): Promise<Array<[number, string]>> => {
    const unique = [...new Set(ids)];
    const missing = unique.filter((id) => !memo.has(id));
    if (missing.length > 0) for (const [id, no] of await numbersOf(tx, tenant, missing, db)) memo.set(id, no);
    return unique.flatMap((id): Array<[number, string]> => (memo.has(id) ? [[memo.get(id) as number, id]] : [])).sort((a, b) => a[0] - b[0]);
  };
  return {
    async accessesFrom(ids, limit) {
      // Walks the key (origin number first, in key order, so `limit` stops the walk) and asks
      // which resources link principals: the tenant's linking resources held in memory on
      // SQLite, else the resource's row, read anyway for its id.
      const origins = await numbered(ids);
      if (origins.length === 0) return [];
      if (db === undefined) return accessesThroughBuilder(tx, tenant, origins, limit, memo);
      const idOf = new Map(origins);
      const { rows, linking } = sqliteAccessRows(db, tenant, origins.map(([no]) => no), limit);
      for (const [, resourceNo, resourceId] of rows) memo.set(resourceId, resourceNo);
      if (linking !== undefined) return rows.map(([originNo, , resource_id, mode]) => ({ origin_id: idOf.get(originNo) as string, resource_id, mode, resource: linking.get(resource_id) ?? null }));
      // The few linking rows, read afterwards (one connection, one snapshot: the second read sees them).
      const found = new Map<string, GraphNode>();
      for (const c of chunks([...new Set(rows.flatMap(([, , , , id]) => (id === null ? [] : [id])))], 500)) {
        for (const n of await tx.selectFrom('access_nodes').select(NODE_COLS).where('tenant_id', '=', tenant).where('id', 'in', c).execute()) found.set(n.id, nodeOf(n));
      }
      return rows.map(([originNo, , resource_id, mode, id]) => ({ origin_id: idOf.get(originNo) as string, resource_id, mode, resource: id === null ? null : (found.get(id) ?? null) }));
    },
    async edgesOf(accesses) {
      const wanted = new Set(accesses.map(accessKey));
      await numbered(accesses.flatMap((a) => [a.origin_id, a.resource_id]));
      const byOrigin = new Map<number, Set<number>>();
      for (const a of accesses) {
        const o = memo.get(a.origin_id);
        const r = memo.get(a.resource_id);
        if (o !== undefined && r !== undefined) byOrigin.set(o, (byOrigin.get(o) ?? new Set()).add(r));
      }
      const out: GraphEdge[] = [];
      // `origin in (…) and resource in (…)` seeks every pair of the two lists in the key: groups of
      // origins whose resources together stay few keep that product small.
      let origins: number[] = [];
      let resources = new Set<number>();
      const flush = async () => {
        if (origins.length === 0) return;
        for (const row of await edges.select(EDGE_COLS).where('origin_no', 'in', origins).where('resource_no', 'in', [...resources]).execute()) {
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
      // (resource_no, id) order: the resource index's own, so `limit` stops the walk.
      for (const c of chunks(await numbered(ids), 500)) {
        if (out.length >= limit) break;
        const nos = c.map(([no]) => no);
        for (const r of await edges.select(EDGE_COLS).where('resource_no', 'in', nos).orderBy('resource_no').orderBy('id').limit(limit - out.length).execute()) out.push(edgeOf(r));
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
 * A GraphSource over arrays held in memory. `numbers`: each node's number, the order the stores
 * read edges in (by origin, resource and mode numbers; a resource's incoming edges by id); nodes
 * without one rank after those with one, by id, so a graph built by hand reads in id order.
 */
export function memoryGraphSource(nodes: readonly GraphNode[], edges: readonly GraphEdge[], numbers: ReadonlyMap<string, number> = new Map()): GraphSource {
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
  // The stores' `order by` of those columns, column by column (ids: canonical lowercase UUIDs; a
  // node's place: its number, then its id).
  const rank = (id: string): Array<number | string> => [numbers.get(id) ?? Number.MAX_SAFE_INTEGER, id];
  const byKey =
    <T>(key: (x: T) => Array<number | string>) =>
    (a: T, b: T): number => {
      const [ka, kb] = [key(a), key(b)];
      for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return (ka[i] as number | string) < (kb[i] as number | string) ? -1 : 1;
      return 0;
    };
  return {
    accessesFrom: async (ids, limit) =>
      uniq(ids)
        .flatMap((id) => from.get(id) ?? [])
        .sort(byKey((e) => [...rank(e.origin_id), ...rank(e.resource_id), e.mode]))
        .slice(0, limit)
        .map((e) => {
          const r = byId.get(e.resource_id);
          return { origin_id: e.origin_id, resource_id: e.resource_id, mode: e.mode, resource: linking(r) ? r : null };
        }),
    edgesOf: async (accesses) => {
      const wanted = new Set(accesses.map(accessKey));
      return uniq(accesses.map((a) => a.origin_id)).flatMap((id) => (from.get(id) ?? []).filter((e) => wanted.has(accessKey(e))));
    },
    edgesTo: async (ids, limit) => uniq(ids).flatMap((id) => to.get(id) ?? []).sort(byKey((e) => [...rank(e.resource_id), e.id])).slice(0, limit),
    nodes: async (ids) => new Map(uniq(ids).flatMap((id) => (byId.has(id) ? [[id, byId.get(id) as GraphNode] as const] : []))),
    children: async (ids) => uniq(ids).flatMap((id) => kids.get(id) ?? []),
  };
}
