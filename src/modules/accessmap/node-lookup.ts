/**
 * Batched node lookups of the write paths (resolving an observation's origin and resource, gRPC
 * ingest's existence checks): thousands of ids or refs per batch. On SQLite each lookup is one
 * prepared statement that reads its values from a JSON array (`json_each`), so a batch costs no
 * query building and no statement preparation per chunk, and it asks only about the nodes the
 * writer's node cache does not hold (node-cache.ts); elsewhere chunks of 500 parameters through
 * the query builder.
 */
import { sql, type RawBuilder, type SqlBool, type Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle } from '../../store/store-types.js';
import { chunks } from './chunks.js';
import { kindOfCode, lookupsOf, nodeCode, numberOfCode, type TenantNodes } from './node-cache.js';

type Tx = Transaction<Database>;

/** The SQLite statements, by name (exported for the migration tests, which read their query plans). */
// raw: bench accessmap (ingest edges/s); the builder forms below are the same lookups on Postgres.
export const LOOKUPS = {
  nodesById: 'select n.id, n.kind, n.no from access_nodes n where n.tenant_id = ? and n.id in (select value from json_each(?))',
  nodesByRef:
    'select n.id, n.ref, n.no from access_nodes n where n.tenant_id = ? and n.kind = ? and n.ref in (select value from json_each(?))',
  agentsById: 'select a.id, a.no from agents a where a.tenant_id = ? and a.id in (select value from json_each(?))',
  numbersById:
    'select a.id, a.no from agents a where a.tenant_id = ? and a.id in (select value from json_each(?)) union all select n.id, n.no ' +
    'from access_nodes n where n.tenant_id = ? and n.id in (select value from json_each(?))',
  agentsByExternalId:
    'select a.id, a.external_id, a.no from agents a where a.tenant_id = ? and a.external_id in (select value from json_each(?))',
} as const;

const prepared = new WeakMap<SqliteHandle, Map<keyof typeof LOOKUPS, ReturnType<SqliteHandle['prepare']>>>();

function lookup<R>(db: SqliteHandle, name: keyof typeof LOOKUPS, ...params: unknown[]): R[] {
  let byName = prepared.get(db);
  if (byName === undefined) prepared.set(db, (byName = new Map()));
  let s = byName.get(name);
  if (s === undefined) byName.set(name, (s = db.prepare(LOOKUPS[name])));
  return s.all(...params) as R[];
}

/**
 * The SQLite path of a lookup through the node cache: what the tenant's cached nodes answer
 * (`hit`), then one statement about the rest, whose answers the transaction keeps if it commits
 * (`learn`, returning how many it added).
 */
function cached<R>(
  tx: Tx,
  db: SqliteHandle,
  tenant: string,
  name: keyof typeof LOOKUPS,
  keys: readonly string[],
  hit: (t: TenantNodes, key: string) => R | undefined,
  learn: (t: TenantNodes, rows: R[]) => number,
  ...head: unknown[]
): R[] {
  const lookups = lookupsOf(tx, db);
  if (lookups === undefined) return lookup<R>(db, name, tenant, ...head, JSON.stringify(keys));
  const nodes = lookups.nodes(tenant);
  const out: R[] = [];
  const missing: string[] = [];
  for (const k of keys) {
    const r = hit(nodes, k);
    if (r === undefined) missing.push(k);
    else out.push(r);
  }
  if (missing.length === 0) return out;
  const found = lookup<R>(db, name, tenant, ...head, JSON.stringify(missing));
  if (found.length > 0) lookups.learn(tenant, (t) => learn(t, found));
  for (const r of found) out.push(r);
  return out;
}

/** Adds `rows` to `map` under `key(row)`; how many were new. */
function addAll<R, V>(map: Map<string, V>, rows: readonly R[], key: (r: R) => string, value: (r: R) => V): number {
  const before = map.size;
  for (const r of rows) map.set(key(r), value(r));
  return map.size - before;
}

/** Keeps access nodes transaction `tx` created, once it has committed (node-cache.ts). */
export function learnCreated(
  tx: Tx,
  db: SqliteHandle | undefined,
  tenant: string,
  rows: ReadonlyArray<{ id: string; kind: string; ref: string; no: number }>,
): void {
  if (db === undefined || rows.length === 0) return;
  lookupsOf(tx, db)?.learn(
    tenant,
    (t) =>
      addAll(
        t.byId,
        rows,
        (r) => r.id,
        (r) => nodeCode(r.kind, r.no),
      ) +
      addAll(
        t.byRef,
        rows,
        (r) => `${r.kind}\n${r.ref}`,
        (r) => ({ id: r.id, no: r.no }),
      ),
  );
}

/** Nodes of `access_nodes` (not agents) among `ids`, with their kind and number. */
export async function nodesById(
  tx: Tx,
  db: SqliteHandle | undefined,
  tenant: string,
  ids: readonly string[],
): Promise<Array<{ id: string; kind: string; no: number }>> {
  if (ids.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string; kind: string; no: number }>(
      tx,
      db,
      tenant,
      'nodesById',
      ids,
      (t, id) => {
        const code = t.byId.get(id);
        return code === undefined ? undefined : { id, kind: kindOfCode(code), no: numberOfCode(code) };
      },
      (t, rows) =>
        addAll(
          t.byId,
          rows,
          (r) => r.id,
          (r) => nodeCode(r.kind, r.no),
        ),
    );
  }
  const out: Array<{ id: string; kind: string; no: number }> = [];
  // The kind is checked by the caller, not in SQL: `kind = ?` would lead SQLite onto the (tenant, kind, ref)
  // index and a scan of every node of that kind, where (tenant, id) finds each row directly.
  for (const c of chunks(ids, 500))
    for (const r of await tx
      .selectFrom('access_nodes')
      .select(['id', 'kind', 'no'])
      .where('tenant_id', '=', tenant)
      .where('id', 'in', c)
      .execute())
      out.push({ ...r, no: Number(r.no) });
  return out;
}

/** Nodes of one kind among natural keys `refs`, with their number. */
export async function nodesByRef(
  tx: Tx,
  db: SqliteHandle | undefined,
  tenant: string,
  kind: string,
  refs: readonly string[],
): Promise<Array<{ id: string; ref: string; no: number }>> {
  if (refs.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string; ref: string; no: number }>(
      tx,
      db,
      tenant,
      'nodesByRef',
      refs,
      (t, ref) => {
        const n = t.byRef.get(`${kind}\n${ref}`);
        return n === undefined ? undefined : { id: n.id, ref, no: n.no };
      },
      (t, rows) =>
        addAll(
          t.byRef,
          rows,
          (r) => `${kind}\n${r.ref}`,
          (r) => ({ id: r.id, no: r.no }),
        ),
      kind,
    );
  }
  const out: Array<{ id: string; ref: string; no: number }> = [];
  for (const c of chunks(refs, 500))
    for (const r of await tx
      .selectFrom('access_nodes')
      .select(['id', 'ref', 'no'])
      .where('tenant_id', '=', tenant)
      .where('kind', '=', kind)
      .where('ref', 'in', c)
      .execute())
      out.push({ ...r, no: Number(r.no) });
  return out;
}

/** Agents among `ids`, with their number. */
export async function agentsById(
  tx: Tx,
  db: SqliteHandle | undefined,
  tenant: string,
  ids: readonly string[],
): Promise<Array<{ id: string; no: number }>> {
  if (ids.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string; no: number }>(
      tx,
      db,
      tenant,
      'agentsById',
      ids,
      (t, id) => {
        const no = t.agents.get(id);
        return no === undefined ? undefined : { id, no };
      },
      (t, rows) =>
        addAll(
          t.agents,
          rows,
          (r) => r.id,
          (r) => r.no,
        ),
    );
  }
  const out: Array<{ id: string; no: number }> = [];
  for (const c of chunks(ids, 500))
    for (const r of await tx.selectFrom('agents').select(['id', 'no']).where('tenant_id', '=', tenant).where('id', 'in', c).execute())
      out.push({ id: r.id, no: Number(r.no) });
  return out;
}

/** Agents among external ids `refs`, with their number. */
export async function agentsByExternalId(
  tx: Tx,
  db: SqliteHandle | undefined,
  tenant: string,
  refs: readonly string[],
): Promise<Array<{ id: string; external_id: string; no: number }>> {
  if (refs.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string; external_id: string; no: number }>(
      tx,
      db,
      tenant,
      'agentsByExternalId',
      refs,
      (t, ref) => {
        const n = t.externals.get(ref);
        return n === undefined ? undefined : { id: n.id, external_id: ref, no: n.no };
      },
      (t, rows) =>
        addAll(
          t.externals,
          rows,
          (r) => r.external_id,
          (r) => ({ id: r.id, no: r.no }),
        ),
    );
  }
  const out: Array<{ id: string; external_id: string; no: number }> = [];
  for (const c of chunks(refs, 500))
    for (const r of await tx
      .selectFrom('agents')
      .select(['id', 'external_id', 'no'])
      .where('tenant_id', '=', tenant)
      .where('external_id', 'in', c)
      .execute())
      out.push({ id: r.id, external_id: r.external_id, no: Number(r.no) });
  return out;
}

/**
 * Takes `n` fresh node numbers (migration 10): a block from `access_node_counter` on SQLite, from
 * the sequence `access_node_no_seq` elsewhere. Inside the caller's transaction, so a rollback
 * hands the block back on SQLite (the counter row rolls back with it) and leaves a gap on
 * Postgres (sequences do not roll back); numbers are never handed out twice either way.
 */
export async function takeNumbers(tx: Tx, db: SqliteHandle | undefined, n: number): Promise<number[]> {
  if (n === 0) return [];
  if (db !== undefined) {
    let s = counterStatements.get(db);
    if (s === undefined)
      counterStatements.set(db, (s = db.prepare('update access_node_counter set last = last + ? where id = 1 returning last')));
    const last = Number((s.get(n) as { last: number }).last);
    return Array.from({ length: n }, (_, i) => last - n + 1 + i);
  }
  const res = await sql<{ no: string | number }>`select nextval('access_node_no_seq') as no from generate_series(1, ${n})`.execute(tx);
  return res.rows.map((r) => Number(r.no));
}

const counterStatements = new WeakMap<SqliteHandle, ReturnType<SqliteHandle['prepare']>>();

/**
 * Numbers of nodes (agents included) among `ids`, for the reads that seek edges by number; ids
 * that name no node of the tenant are absent. `db`: the SQLite connection under `tx`, when there
 * is one (a path search asks once per level).
 */
export async function numbersOf(tx: Tx, tenant: string, ids: readonly string[], db?: SqliteHandle): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (ids.length === 0) return out;
  if (db !== undefined) {
    const list = JSON.stringify([...new Set(ids)]);
    for (const r of lookup<{ id: string; no: number }>(db, 'numbersById', tenant, list, tenant, list)) out.set(r.id, r.no);
    return out;
  }
  for (const c of chunks([...new Set(ids)], 500)) {
    const rows = await sql<{ id: string; no: string | number }>`
      select id, no from agents where tenant_id = ${tenant} and id in (${sql.join(c)})
      union all select id, no from access_nodes where tenant_id = ${tenant} and id in (${sql.join(c)})`.execute(tx);
    for (const r of rows.rows) out.set(r.id, Number(r.no));
  }
  return out;
}

/**
 * `<col> = tenant` written so that no index starts from it: for queries that seek edges by node
 * number, where the tenant is a check on the rows found, not a way in. Left as a plain equality,
 * SQLite (which keeps no statistics) walks the table's `(tenant_id, id)` key and filters every
 * edge of the tenant instead of seeking the numbers. Works on both backends (`uuid || ''` is text
 * on Postgres, where row-level security applies the tenant besides).
 */
export function tenantCheck(col: string, tenant: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(col)} || '' = ${tenant}`;
}
