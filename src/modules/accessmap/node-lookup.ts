/**
 * Batched node lookups of the write paths (resolving an observation's origin and resource, gRPC
 * ingest's existence checks): thousands of ids or refs per batch. On SQLite each lookup is one
 * prepared statement that reads its values from a JSON array (`json_each`), so a batch costs no
 * query building and no statement preparation per chunk; elsewhere chunks of 500 parameters
 * through the query builder.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle } from '../../store/store.js';
import { chunks } from './chunks.js';

type Tx = Transaction<Database>;

const LOOKUPS = {
  nodesById: 'select n.id, n.kind from access_nodes n where n.tenant_id = ? and n.id in (select value from json_each(?))',
  nodesByRef: 'select n.id, n.ref from access_nodes n where n.tenant_id = ? and n.kind = ? and n.ref in (select value from json_each(?))',
  agentsById: 'select a.id from agents a where a.tenant_id = ? and a.id in (select value from json_each(?))',
  agentsByExternalId: 'select a.id, a.external_id from agents a where a.tenant_id = ? and a.external_id in (select value from json_each(?))',
} as const;

const prepared = new WeakMap<SqliteHandle, Map<keyof typeof LOOKUPS, ReturnType<SqliteHandle['prepare']>>>();

function lookup<R>(db: SqliteHandle, name: keyof typeof LOOKUPS, ...params: unknown[]): R[] {
  let byName = prepared.get(db);
  if (byName === undefined) prepared.set(db, (byName = new Map()));
  let s = byName.get(name);
  if (s === undefined) byName.set(name, (s = db.prepare(LOOKUPS[name])));
  return s.all(...params) as R[];
}

/** Nodes of `access_nodes` (not agents) among `ids`, with their kind. */
export async function nodesById(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: readonly string[]): Promise<Array<{ id: string; kind: string }>> {
  if (ids.length === 0) return [];
  if (db !== undefined) return lookup(db, 'nodesById', tenant, JSON.stringify(ids));
  const out: Array<{ id: string; kind: string }> = [];
  // The kind is checked by the caller, not in SQL: `kind = ?` would lead SQLite onto the (tenant, kind, ref)
  // index and a scan of every node of that kind, where (tenant, id) finds each row directly.
  for (const c of chunks(ids, 500)) out.push(...(await tx.selectFrom('access_nodes').select(['id', 'kind']).where('tenant_id', '=', tenant).where('id', 'in', c).execute()));
  return out;
}

/** Nodes of one kind among natural keys `refs`. */
export async function nodesByRef(tx: Tx, db: SqliteHandle | undefined, tenant: string, kind: string, refs: readonly string[]): Promise<Array<{ id: string; ref: string }>> {
  if (refs.length === 0) return [];
  if (db !== undefined) return lookup(db, 'nodesByRef', tenant, kind, JSON.stringify(refs));
  const out: Array<{ id: string; ref: string }> = [];
  for (const c of chunks(refs, 500)) out.push(...(await tx.selectFrom('access_nodes').select(['id', 'ref']).where('tenant_id', '=', tenant).where('kind', '=', kind).where('ref', 'in', c).execute()));
  return out;
}

/** Agents among `ids`. */
export async function agentsById(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: readonly string[]): Promise<Array<{ id: string }>> {
  if (ids.length === 0) return [];
  if (db !== undefined) return lookup(db, 'agentsById', tenant, JSON.stringify(ids));
  const out: Array<{ id: string }> = [];
  for (const c of chunks(ids, 500)) out.push(...(await tx.selectFrom('agents').select('id').where('tenant_id', '=', tenant).where('id', 'in', c).execute()));
  return out;
}

/** Agents among external ids `refs`. */
export async function agentsByExternalId(tx: Tx, db: SqliteHandle | undefined, tenant: string, refs: readonly string[]): Promise<Array<{ id: string; external_id: string }>> {
  if (refs.length === 0) return [];
  if (db !== undefined) return lookup(db, 'agentsByExternalId', tenant, JSON.stringify(refs));
  const out: Array<{ id: string; external_id: string }> = [];
  for (const c of chunks(refs, 500)) out.push(...(await tx.selectFrom('agents').select(['id', 'external_id']).where('tenant_id', '=', tenant).where('external_id', 'in', c).execute()));
  return out;
}
