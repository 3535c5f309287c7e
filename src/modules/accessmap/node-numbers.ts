/**
 * Node numbers (migration 9, docs/accessmap.md "Node numbers"): the integer each node an edge names
 * is known by in access_edges' key `(origin_no, resource_no, mode)` and resource index
 * `(resource_no, id)`. A number is assigned the first time a write names the node, in id order
 * within a batch, and is never reused. Reads translate ids to numbers before they seek edges; a node
 * without a number has no edges.
 */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle } from '../../store/store.js';
import { chunks } from './chunks.js';

type Tx = Transaction<Database>;

const LOOKUP = 'select no, id from access_node_numbers where tenant_id = ? and id in (select value from json_each(?))';
// `order by value`: numbers follow id order within a batch. `where true` keeps the upsert's ON
// from parsing as a join constraint (sqlite.org/lang_upsert.html).
const ASSIGN = 'insert into access_node_numbers (id, tenant_id) select value, ? from json_each(?) where true order by value on conflict (id) do nothing';

const prepared = new WeakMap<SqliteHandle, { lookup: ReturnType<SqliteHandle['prepare']>; assign: ReturnType<SqliteHandle['prepare']> }>();

function statements(db: SqliteHandle): { lookup: ReturnType<SqliteHandle['prepare']>; assign: ReturnType<SqliteHandle['prepare']> } {
  let s = prepared.get(db);
  if (s === undefined) prepared.set(db, (s = { lookup: db.prepare(LOOKUP), assign: db.prepare(ASSIGN) }));
  return s;
}

/** The numbers of those of `ids` that have one (a node no edge has named yet has none). */
export async function knownNumbers(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: Iterable<string>): Promise<Map<string, number>> {
  const wanted = [...new Set(ids)];
  const out = new Map<string, number>();
  if (wanted.length === 0) return out;
  if (db !== undefined) {
    for (const r of statements(db).lookup.all(tenant, JSON.stringify(wanted)) as Array<{ no: number; id: string }>) out.set(r.id, Number(r.no));
    return out;
  }
  for (const c of chunks(wanted, 500)) {
    for (const r of await tx.selectFrom('access_node_numbers').select(['no', 'id']).where('tenant_id', '=', tenant).where('id', 'in', c).execute()) out.set(r.id, Number(r.no));
  }
  return out;
}

/** The numbers of `ids`, assigning one to each that has none yet; for writes of edges. */
export async function nodeNumbers(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: Iterable<string>): Promise<Map<string, number>> {
  const out = await knownNumbers(tx, db, tenant, ids);
  const missing = [...new Set(ids)].filter((id) => !out.has(id)).sort();
  if (missing.length === 0) return out;
  if (db !== undefined) statements(db).assign.run(tenant, JSON.stringify(missing));
  else {
    // A concurrent writer may number the same node first: ON CONFLICT leaves its number, read below.
    for (const c of chunks(missing, 500)) await tx.insertInto('access_node_numbers').values(c.map((id) => ({ id, tenant_id: tenant }))).onConflict((oc) => oc.column('id').doNothing()).execute();
  }
  for (const [id, no] of await knownNumbers(tx, db, tenant, missing)) out.set(id, no);
  return out;
}

/** `(select no from access_node_numbers where id = <id>)`: a node's number inside a query (null when it has none, which matches no edge). */
export function numberOf(id: string): RawBuilder<number> {
  return sql<number>`(select nn.no from access_node_numbers nn where nn.id = ${id})`;
}
