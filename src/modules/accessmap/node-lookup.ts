/**
 * Batched node lookups of the write paths (resolving an observation's origin and resource, gRPC
 * ingest's existence checks): thousands of ids or refs per batch. On SQLite each lookup is one
 * prepared statement that reads its values from a JSON array (`json_each`), so a batch costs no
 * query building and no statement preparation per chunk, and only about nodes the connection's
 * node cache does not already know (node-cache.ts); elsewhere chunks of 500 parameters through the
 * query builder.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle } from '../../store/store.js';
import { chunks } from './chunks.js';
import { nodeFacts, rememberFacts, type TenantFacts } from './node-cache.js';

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

/**
 * The SQLite path of a lookup: answers what the tenant's cached facts know (`hit`: a found row, or
 * undefined), asks the database about the rest in one statement, and remembers what it answered.
 */
function cached<R>(db: SqliteHandle, tenant: string, name: keyof typeof LOOKUPS, keys: readonly string[], hit: (f: TenantFacts, key: string) => R | undefined, learn: (f: TenantFacts, row: R) => void, ...head: unknown[]): R[] {
  const facts = nodeFacts(db, tenant);
  if (facts === undefined) return lookup<R>(db, name, tenant, ...head, JSON.stringify(keys));
  const out: R[] = [];
  const missing: string[] = [];
  for (const k of keys) {
    const r = hit(facts, k);
    if (r === undefined) missing.push(k);
    else out.push(r);
  }
  if (missing.length === 0) return out;
  const found = lookup<R>(db, name, tenant, ...head, JSON.stringify(missing));
  if (found.length > 0) rememberFacts(db, tenant, (f) => found.forEach((r) => learn(f, r)));
  return out.concat(found);
}

/** Remembers access nodes the caller has just created (inside its transaction), so the next batch finds them in memory. */
export function rememberNodes(db: SqliteHandle | undefined, tenant: string, rows: ReadonlyArray<{ id: string; kind: string; ref: string }>): void {
  if (db === undefined || rows.length === 0) return;
  rememberFacts(db, tenant, (f) => {
    for (const r of rows) {
      f.nodes.set(r.id, r.kind);
      f.refs.set(`${r.kind}\n${r.ref}`, r.id);
    }
  });
}

/** Nodes of `access_nodes` (not agents) among `ids`, with their kind. */
export async function nodesById(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: readonly string[]): Promise<Array<{ id: string; kind: string }>> {
  if (ids.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string; kind: string }>(
      db,
      tenant,
      'nodesById',
      ids,
      (f, id) => {
        const kind = f.nodes.get(id);
        return kind === undefined ? undefined : { id, kind };
      },
      (f, r) => void f.nodes.set(r.id, r.kind),
    );
  }
  const out: Array<{ id: string; kind: string }> = [];
  // The kind is checked by the caller, not in SQL: `kind = ?` would lead SQLite onto the (tenant, kind, ref)
  // index and a scan of every node of that kind, where (tenant, id) finds each row directly.
  for (const c of chunks(ids, 500)) out.push(...(await tx.selectFrom('access_nodes').select(['id', 'kind']).where('tenant_id', '=', tenant).where('id', 'in', c).execute()));
  return out;
}

/** Nodes of one kind among natural keys `refs`. */
export async function nodesByRef(tx: Tx, db: SqliteHandle | undefined, tenant: string, kind: string, refs: readonly string[]): Promise<Array<{ id: string; ref: string }>> {
  if (refs.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string; ref: string }>(
      db,
      tenant,
      'nodesByRef',
      refs,
      (f, ref) => {
        const id = f.refs.get(`${kind}\n${ref}`);
        return id === undefined ? undefined : { id, ref };
      },
      (f, r) => void f.refs.set(`${kind}\n${r.ref}`, r.id),
      kind,
    );
  }
  const out: Array<{ id: string; ref: string }> = [];
  for (const c of chunks(refs, 500)) out.push(...(await tx.selectFrom('access_nodes').select(['id', 'ref']).where('tenant_id', '=', tenant).where('kind', '=', kind).where('ref', 'in', c).execute()));
  return out;
}

/** Agents among `ids`. */
export async function agentsById(tx: Tx, db: SqliteHandle | undefined, tenant: string, ids: readonly string[]): Promise<Array<{ id: string }>> {
  if (ids.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string }>(
      db,
      tenant,
      'agentsById',
      ids,
      (f, id) => (f.agents.has(id) ? { id } : undefined),
      (f, r) => void f.agents.add(r.id),
    );
  }
  const out: Array<{ id: string }> = [];
  for (const c of chunks(ids, 500)) out.push(...(await tx.selectFrom('agents').select('id').where('tenant_id', '=', tenant).where('id', 'in', c).execute()));
  return out;
}

/** Agents among external ids `refs`. */
export async function agentsByExternalId(tx: Tx, db: SqliteHandle | undefined, tenant: string, refs: readonly string[]): Promise<Array<{ id: string; external_id: string }>> {
  if (refs.length === 0) return [];
  if (db !== undefined) {
    return cached<{ id: string; external_id: string }>(
      db,
      tenant,
      'agentsByExternalId',
      refs,
      (f, ref) => {
        const id = f.externals.get(ref);
        return id === undefined ? undefined : { id, external_id: ref };
      },
      (f, r) => void f.externals.set(r.external_id, r.id),
    );
  }
  const out: Array<{ id: string; external_id: string }> = [];
  for (const c of chunks(refs, 500)) out.push(...(await tx.selectFrom('agents').select(['id', 'external_id']).where('tenant_id', '=', tenant).where('external_id', 'in', c).execute()));
  return out;
}
