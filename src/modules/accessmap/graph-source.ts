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
import type { SqliteHandle, SqliteStatement, Store } from '../../store/store-types.js';
import { linkingNodes } from './linking-set.js';
import type { GraphNode } from './model.js';
export type { GraphNode } from './model.js';
import { chunks } from './node-store.js';
import { numbersOf, tenantCheck } from './node-lookup.js';
import { withFolded } from './recent-edges.js';

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


/** What a search walks: one access edge reduced to its ends and mode. */
export interface Access {
  origin_id: string;
  resource_id: string;
  mode: Mode;
}

/**
 * An access as a search walks it: the resource by node number (the order both sources read in),
 * and its node only when it links principals (credential, config, code). A search names the other
 * resources by id only when it returns them (`GraphSource.resources`), so the walk reads the edge
 * key alone.
 */
export interface LinkedAccess {
  origin_id: string;
  resource_no: number;
  mode: Mode;
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
  /** resources by node number (those `accessesFrom` answered); numbers that name no resource of the tenant are absent */
  resources(nos: readonly number[]): Promise<Map<number, GraphNode>>;
  /** nodes whose parent is one of `ids` (an agent's sessions, an identity's credentials) */
  children(ids: readonly string[]): Promise<GraphNode[]>;
}

/** Resource classes that link principals (attack-paths.ts); the rest (`data`) only ends a path. */
export const LINKING_CLASSES = ['credential', 'config', 'code'] as const;

/**
 * `n.class in (…LINKING_CLASSES)`: the predicate of access_nodes_linking_idx (migration 005), as literals (a bound parameter would not
 * prove it).
 */
const LINKING_PREDICATE = sql<boolean>`n.class in (${sql.raw(LINKING_CLASSES.map((c) => `'${c}'`).join(', '))})`;

type EdgeRow = {
  id: string;
  origin_kind: string;
  origin_id: string;
  resource_id: string;
  mode: string;
  permitted: number;
  observed_count: number | string;
  confidence: string;
};

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
  return {
    id: n.id,
    kind: n.kind as NodeKind,
    name: n.name,
    class: n.class === '' ? null : (n.class as ResourceClass),
    parent_id: n.parent_id,
  };
}

/** origin number, resource number, mode, and (probe) the resource's id when it links principals, else null. */
type AccessRow = [origin_no: number, resource_no: number, mode: Mode, linking?: string | null];

/**
 * The accesses of `origins` (by number, ascending) in key order, at most `limit`, with the
 * resource's node when it links principals, through the query builder (Postgres): chunks of 500
 * origins; the linking resource's row comes in the same statement through a left join on
 * `access_nodes_linking_no` (migration 13), a small index of the linking resources alone, so an
 * access to any other resource costs a probe of that index and no row.
 */
async function accessesThroughBuilder(
  tx: Transaction<Database>,
  tenant: string,
  origins: ReadonlyArray<readonly [no: number, id: string]>,
  limit: number,
  memo: Map<string, number>,
): Promise<LinkedAccess[]> {
  const out: LinkedAccess[] = [];
  const idOf = new Map(origins.map(([no, id]) => [no, id]));
  for (const c of chunks(
    origins.map(([no]) => no),
    500,
  )) {
    if (out.length >= limit) break;
    const rows = await sql<{
      origin_no: string | number;
      resource_no: string | number;
      mode: Mode;
      id: string | null;
      kind: string;
      name: string;
      class: string;
      parent_id: string | null;
    }>`
      select e.origin_no, e.resource_no, e.mode, n.id, n.kind, n.name, n.class, n.parent_id
      from access_edges e left join access_nodes n on n.no = e.resource_no and ${LINKING_PREDICATE} and n.tenant_id = ${tenant}
      where e.tenant_id = ${tenant} and e.origin_no in (${sql.join(c)})
      order by e.origin_no, e.resource_no, e.mode limit ${limit - out.length}`.execute(tx);
    for (const r of rows.rows) {
      const resourceNo = Number(r.resource_no);
      let resource: GraphNode | null = null;
      if (r.id !== null) {
        resource = nodeOf({ id: r.id, kind: r.kind, name: r.name, class: r.class, parent_id: r.parent_id });
        memo.set(r.id, resourceNo);
      }
      out.push({ origin_id: idOf.get(Number(r.origin_no)) as string, resource_no: resourceNo, mode: r.mode, resource });
    }
  }
  return out;
}

/**
 * The accesses of `origins` (numbers, ascending) in key order, at most `limit`, on SQLite's own
 * connection: one statement prepared once per connection that reads the origins from a JSON array
 * (`json_each`; SQLite walks the key `(origin_no, resource_no, mode)` seek by seek in order, no
 * sort, from the index alone) and answers arrays, not objects. The hot loop of every path search.
 * Which resources link principals comes from the tenant's linking resources held in memory by
 * number (`linking`, linking-set.ts); without them (turned off, or a tenant past the cap) the
 * walk probes the linking resources' index by number (`access_nodes_linking_no`, migration 13) and
 * answers the resource's id when it links (docs/accessmap.md "Queries").
 */
// raw: bench accessmap (reachability p95); accessesThroughBuilder is the same walk on Postgres.
function sqliteAccessRows(
  db: SqliteHandle,
  tenant: string,
  origins: readonly number[],
  limit: number,
): { rows: AccessRow[]; linking?: ReadonlyMap<number, GraphNode> } {
  let s = accessStatements.get(db);
  if (s === undefined) {
    s = {
      // The key walk stays the outer loop of the LEFT JOIN; the linking resources' own index
      // (migration 13) answers the probe, and the unary + keeps the tenant a check on the rows found.
      probe: db
        .prepare(
          `select e.origin_no, e.resource_no, e.mode, n.id
           from access_edges e left join access_nodes n indexed by access_nodes_linking_no
             on n.no = e.resource_no and n.class in (${LINKING_CLASSES.map((c) => `'${c}'`).join(', ')}) and +n.tenant_id = ?
           where e.origin_no in (select value from json_each(?))
           order by e.origin_no, e.resource_no, e.mode limit ?`,
        )
        .raw(true),
      // The key alone: the origins are the tenant's (looked up within it), and so are their edges.
      walk: db
        .prepare(
          `select origin_no, resource_no, mode from access_edges
           where origin_no in (select value from json_each(?))
           order by origin_no, resource_no, mode limit ?`,
        )
        .raw(true),
    };
    accessStatements.set(db, s);
  }
  const linking = linkingNodes(db, tenant);
  if (linking === undefined) return { rows: s.probe.all(tenant, JSON.stringify(origins), limit) as AccessRow[] };
  return { rows: s.walk.all(JSON.stringify(origins), limit) as AccessRow[], linking };
}

const accessStatements = new WeakMap<SqliteHandle, { probe: SqliteStatement; walk: SqliteStatement }>();

/**
 * A GraphSource over one tenant inside an open transaction. On SQLite pass the transaction's
 * connection (`store.sqlite.handle(tx)`): the accesses a search walks are then read with a
 * statement prepared once (see `sqliteAccessRows`). Edges are sought by node number (migration
 * 10); the numbers of the ids a search asks about are looked up once and remembered for the
 * length of the source (numbers never change); the walk adds those of the linking resources it
 * meets, and `resources` those of the resources a search names.
 */
export function storeGraphSource(tx: Transaction<Database>, tenant: string, db?: SqliteHandle): GraphSource {
  const edges = tx.selectFrom('access_edges').where(tenantCheck('tenant_id', tenant));
  const memo = new Map<string, number>();
  /** [number, id] of the nodes among `ids`, by number; unknown ids are left out. */
  const numbered = async (ids: readonly string[]): Promise<Array<[number, string]>> => {
    const unique = [...new Set(ids)];
    const missing = unique.filter((id) => !memo.has(id));
    if (missing.length > 0) for (const [id, no] of await numbersOf(tx, tenant, missing, db)) memo.set(id, no);
    return unique
      .flatMap((id): Array<[number, string]> => (memo.has(id) ? [[memo.get(id) as number, id]] : []))
      .sort((a, b) => a[0] - b[0]);
  };
  return {
    async accessesFrom(ids, limit) {
      // Walks the key (origin number first, in key order, so `limit` stops the walk) and asks
      // which resources link principals: the tenant's linking resources held in memory on
      // SQLite, else the linking resource's row.
      const origins = await numbered(ids);
      if (origins.length === 0) return [];
      if (db === undefined) return accessesThroughBuilder(tx, tenant, origins, limit, memo);
      const idOf = new Map(origins);
      const { rows, linking } = sqliteAccessRows(db, tenant, origins.map(([no]) => no), limit);
      if (linking !== undefined) {
        return rows.map(([originNo, resource_no, mode]) => {
          const resource = linking.get(resource_no) ?? null;
          if (resource !== null) memo.set(resource.id, resource_no);
          return { origin_id: idOf.get(originNo) as string, resource_no, mode, resource };
        });
      }
      // The few linking rows, read afterwards (one connection, one snapshot: the second read sees them).
      const found = new Map<string, GraphNode>();
      for (const c of chunks([...new Set(rows.flatMap(([, , , id]) => (id == null ? [] : [id])))], 500)) {
        for (const n of await tx
          .selectFrom('access_nodes')
          .select(NODE_COLS)
          .where('tenant_id', '=', tenant)
          .where('id', 'in', c)
          .execute())
          found.set(n.id, nodeOf(n));
      }
      return rows.map(([originNo, resource_no, mode, id]) => {
        const resource = id == null ? null : (found.get(id) ?? null);
        if (resource !== null) memo.set(resource.id, resource_no);
        return { origin_id: idOf.get(originNo) as string, resource_no, mode, resource };
      });
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
        for (const row of await edges
          .select(EDGE_COLS)
          .where('origin_no', 'in', origins)
          .where('resource_no', 'in', [...resources])
          .execute()) {
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
      // (resource_no, seq) order: the resource index's own (migration 14), so `limit` stops the walk.
      for (const c of chunks(await numbered(ids), 500)) {
        if (out.length >= limit) break;
        const nos = c.map(([no]) => no);
        for (const r of await edges
          .select(EDGE_COLS)
          .where('resource_no', 'in', nos)
          .orderBy('resource_no')
          .orderBy('seq')
          .limit(limit - out.length)
          .execute())
          out.push(edgeOf(r));
      }
      return out;
    },
    async nodes(ids) {
      const out = new Map<string, GraphNode>();
      for (const c of chunks([...new Set(ids)], 500)) {
        for (const a of await tx
          .selectFrom('agents')
          .select(['id', 'name'])
          .where('tenant_id', '=', tenant)
          .where('id', 'in', c)
          .execute()) {
          out.set(a.id, { id: a.id, kind: 'agent', name: a.name, class: null, parent_id: null });
        }
        for (const n of await tx
          .selectFrom('access_nodes')
          .select(NODE_COLS)
          .where('tenant_id', '=', tenant)
          .where('id', 'in', c)
          .execute())
          out.set(n.id, nodeOf(n));
      }
      return out;
    },
    async resources(nos) {
      const out = new Map<number, GraphNode>();
      for (const c of chunks([...new Set(nos)], 500)) {
        for (const n of await tx
          .selectFrom('access_nodes')
          .select([...NODE_COLS, 'no'])
          .where(tenantCheck('tenant_id', tenant))
          .where('no', 'in', c)
          .execute()) {
          const no = Number(n.no);
          memo.set(n.id, no);
          out.set(no, nodeOf(n));
        }
      }
      return out;
    },
    async children(ids) {
      const out: GraphNode[] = [];
      for (const c of chunks([...new Set(ids)], 500))
        for (const n of await tx
          .selectFrom('access_nodes')
          .select(NODE_COLS)
          .where('tenant_id', '=', tenant)
          .where('parent_id', 'in', c)
          .execute())
          out.push(nodeOf(n));
      return out;
    },
  };
}

/**
 * Runs `fn` on `storeGraphSource` in a transaction of `tenant`, after folding the recent level
 * (recent-edges.ts), so a search sees every observation committed before it began.
 */
export async function withFoldedGraph<T>(store: Store, tenant: string, fn: (g: GraphSource) => Promise<T>): Promise<T> {
  return withFolded(store, tenant, (tx) => fn(storeGraphSource(tx, tenant, store.sqlite?.handle(tx))));
}

/**
 * A GraphSource over arrays held in memory. `numbers`: node numbers, the order the stores read edges
 * in (by origin, resource and mode numbers; a resource's incoming edges by resource number, then in
 * the order `edges` lists them, which stands for the order they were stored in, `seq`); nodes
 * without one are numbered after the highest given, in id order, so a graph built by hand reads in
 * id order.
 */
export function memoryGraphSource(
  nodes: readonly GraphNode[],
  edges: readonly GraphEdge[],
  numbers: ReadonlyMap<string, number> = new Map(),
): GraphSource {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const stored = new Map(edges.map((e, i) => [e, i]));
  const from = new Map<string, GraphEdge[]>();
  const to = new Map<string, GraphEdge[]>();
  const kids = new Map<string, GraphNode[]>();
  for (const e of edges) {
    from.set(e.origin_id, [...(from.get(e.origin_id) ?? []), e]);
    to.set(e.resource_id, [...(to.get(e.resource_id) ?? []), e]);
  }
  for (const n of nodes) if (n.parent_id) kids.set(n.parent_id, [...(kids.get(n.parent_id) ?? []), n]);
  const no = new Map(numbers);
  let top = [...no.values()].reduce((m, n) => Math.max(m, n), 0);
  for (const id of [...new Set([...byId.keys(), ...edges.flatMap((e) => [e.origin_id, e.resource_id])])].sort())
    if (!no.has(id)) no.set(id, ++top);
  const idOfNo = new Map([...no].map(([id, n]) => [n, id]));
  const numberOf = (id: string): number => no.get(id) as number;
  const uniq = <T,>(xs: readonly T[]) => [...new Set(xs)];
  const linking = (n: GraphNode | undefined): n is GraphNode =>
    n?.kind === 'resource' && (LINKING_CLASSES as readonly (string | null)[]).includes(n.class);
  // The stores' `order by` of those columns, column by column (ids: canonical lowercase UUIDs).
  const byKey =
    <T,>(key: (x: T) => Array<number | string>) =>
    (a: T, b: T): number => {
      const [ka, kb] = [key(a), key(b)];
      for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return (ka[i] as number | string) < (kb[i] as number | string) ? -1 : 1;
      return 0;
    };
  return {
    accessesFrom: async (ids, limit) =>
      uniq(ids)
        .flatMap((id) => from.get(id) ?? [])
        .sort(byKey((e) => [numberOf(e.origin_id), numberOf(e.resource_id), e.mode]))
        .slice(0, limit)
        .map((e) => {
          const r = byId.get(e.resource_id);
          return { origin_id: e.origin_id, resource_no: numberOf(e.resource_id), mode: e.mode, resource: linking(r) ? r : null };
        }),
    edgesOf: async (accesses) => {
      const wanted = new Set(accesses.map(accessKey));
      return uniq(accesses.map((a) => a.origin_id)).flatMap((id) => (from.get(id) ?? []).filter((e) => wanted.has(accessKey(e))));
    },
    edgesTo: async (ids, limit) =>
      uniq(ids)
        .flatMap((id) => to.get(id) ?? [])
        .sort(byKey((e) => [numberOf(e.resource_id), stored.get(e) as number]))
        .slice(0, limit),
    nodes: async (ids) => new Map(uniq(ids).flatMap((id) => (byId.has(id) ? [[id, byId.get(id) as GraphNode] as const] : []))),
    resources: async (nos) =>
      new Map(
        uniq(nos).flatMap((n) => {
          const r = byId.get(idOfNo.get(n) ?? '');
          return r?.kind === 'resource' ? [[n, r] as const] : [];
        }),
      ),
    children: async (ids) => uniq(ids).flatMap((id) => kids.get(id) ?? []),
  };
}
