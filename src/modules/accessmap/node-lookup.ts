/**
 * Batched node lookups of the write paths (resolving an observation's origin and resource, gRPC
 * ingest's existence checks): thousands of ids or refs per batch, each answered with the node's
 * number when it has one. On SQLite each lookup is one
 * prepared statement that reads its values from a JSON array (`json_each`), so a batch costs no
 * query building and no statement preparation per chunk; elsewhere chunks of 500 parameters
 * through the query builder.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle } from '../../store/store.js';
import { chunks } from './chunks.js';

type Tx = Transaction<Database>;

// Each lookup also answers the node's number (migration 9; null before its first edge), so a write
// of edges needs no second pass over the same ids (node-numbers.ts).
const LOOKUPS = {
  nodesById: 'select n.id, n.kind, nn.no from access_nodes n left join access_node_numbers nn on nn.id = n.id where n.tenant_id = ? and n.id in (select value from json_each(?))',
  nodesByRef: 'select n.id, n.ref, nn.no from access_nodes n left join access_node_numbers nn on nn.id = n.id where n.tenant_id = ? and n.kind = ? and n.ref in (select value from json_each(?))',
  agentsById: 'select a.id, nn.no from agents a left join access_node_numbers nn on nn.id = a.id where a.tenant_id = ? and a.id in (select value from json_each(?))',
  agentsByExternalId: 'select a.id, a.external_id, nn.no from agents a left join access_node_numbers nn on nn.id = a.id where a.tenant_id = ? and a.external_id in (select value from json_each(?))',
} as const;

/** A node's number as a lookup answers it: null when no edge has named the node yet. */
type No = { no: number | string | null };

const prepared = new WeakMap<SqliteHandle, Map<keyof typeof LOOKUPS, ReturnType<SqliteHandle['prepare']>>>();

function lookup<R>(db: SqliteHandle, name: keyof typeof LOOKUPS, ...params: unknown[]): R[] {
  let byName = prepared.get(db);
  if (byName === undefined) prepared.set(db, (byName = new Map()));
  let s = byName.get(name);
  if (s === undefined) byName.set(name, (s = db.prepare(LOOKUPS[name])));
  return s.all(...params) as R[];
}

/** Nodes of `access_nodes` (not agents) among `ids`, with their kind. */
export async function nodesById(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: readonly string[]): Promise<Array<{ id: string; kind: string } & No>> {
  if (ids.length === 0) return [];
  if (db !== undefined) return lookup(db, 'nodesById', tenant, JSON.stringify(ids));
  const out: Array<{ id: string; kind: string } & No> = [];
  // The kind is checked by the caller, not in SQL: `kind = ?` would lead SQLite onto the (tenant, kind, ref)
  // index and a scan of every node of that kind, where (tenant, id) finds each row directly.
  for (const c of chunks(ids, 500)) out.push(...(await tx.selectFrom('access_nodes as n').leftJoin('access_node_numbers as nn', 'nn.id', 'n.id').select(['n.id', 'n.kind', 'nn.no']).where('n.tenant_id', '=', tenant).where('n.id', 'in', c).execute()));
  return out;
}

/** Nodes of one kind among natural keys `refs`. */
export async function nodesByRef(tx: Tx, db: SqliteHandle | undefined, tenant: string, kind: string, refs: readonly string[]): Promise<Array<{ id: string; ref: string } & No>> {
  if (refs.length === 0) return [];
  if (db !== undefined) return lookup(db, 'nodesByRef', tenant, kind, JSON.stringify(refs));
  const out: Array<{ id: string; ref: string } & No> = [];
  for (const c of chunks(refs, 500)) out.push(...(await tx.selectFrom('access_nodes as n').leftJoin('access_node_numbers as nn', 'nn.id', 'n.id').select(['n.id', 'n.ref', 'nn.no']).where('n.tenant_id', '=', tenant).where('n.kind', '=', kind).where('n.ref', 'in', c).execute()));
  return out;
}

/** Agents among `ids`. */
export async function agentsById(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: readonly string[]): Promise<Array<{ id: string } & No>> {
  if (ids.length === 0) return [];
  if (db !== undefined) return lookup(db, 'agentsById', tenant, JSON.stringify(ids));
  const out: Array<{ id: string } & No> = [];
  for (const c of chunks(ids, 500)) out.push(...(await tx.selectFrom('agents as a').leftJoin('access_node_numbers as nn', 'nn.id', 'a.id').select(['a.id', 'nn.no']).where('a.tenant_id', '=', tenant).where('a.id', 'in', c).execute()));
  return out;
}

/** Agents among external ids `refs`. */
export async function agentsByExternalId(tx: Tx, db: SqliteHandle | undefined, tenant: string, refs: readonly string[]): Promise<Array<{ id: string; external_id: string } & No>> {
  if (refs.length === 0) return [];
  if (db !== undefined) return lookup(db, 'agentsByExternalId', tenant, JSON.stringify(refs));
  const out: Array<{ id: string; external_id: string } & No> = [];
  for (const c of chunks(refs, 500)) out.push(...(await tx.selectFrom('agents as a').leftJoin('access_node_numbers as nn', 'nn.id', 'a.id').select(['a.id', 'a.external_id', 'nn.no']).where('a.tenant_id', '=', tenant).where('a.external_id', 'in', c).execute()));
  return out;
}
