/**
 * Rows of `audit_records` / `audit_heads` ↔ {@link AuditRecord}. Hashes, blinds, signatures, key ids
 * and record ids are stored as raw bytes (schema-ledger.ts) and served as the hex / base64 text
 * DECISIONS.md fixes. Every function runs inside a caller's transaction: tenant-bound
 * (`store.withTenant`) so Postgres RLS confines it.
 */
import type { Insertable, Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { SqliteHandle } from '../store/store.js';
import type { AuditRecordsTable } from '../store/schema-ledger.js';
import type { AuditRecord } from './record.js';
import type { ChainTail } from './chain.js';

type Tx = Transaction<Database>;

/** A stored row as read back (seq may be a string on Postgres). */
type RecordRow = { [K in keyof AuditRecordsTable]: K extends 'seq' ? number | string : AuditRecordsTable[K] };

/** Filters of `GET /v1/audit` (all optional, combined with AND). */
export interface RecordFilter {
  /** action prefix, e.g. `agent.` or `agent.create` */
  action?: string;
  actor?: string;
  target_kind?: string;
  target_id?: string;
  /** occurred_at ≥ since (canonical 9-digit text, which sorts as time) */
  since?: string;
  /** occurred_at < until */
  until?: string;
}

function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replaceAll('-', ''), 'hex');
}

function uuidText(b: Uint8Array): string {
  const h = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** The insert row of a sealed record. */
export function recordRow(r: AuditRecord): Insertable<AuditRecordsTable> {
  return {
    tenant_id: r.tenant,
    seq: r.seq,
    id: uuidBytes(r.id),
    occurred_at: r.occurred_at,
    actor: r.actor,
    actor_kind: r.actor_kind,
    action: r.action,
    target_kind: r.target_kind,
    target_id: r.target_id,
    meta: r.meta,
    meta_blind: r.meta_blind === null ? null : Buffer.from(r.meta_blind, 'hex'),
    meta_commitment: Buffer.from(r.meta_commitment, 'hex'),
    payload_hash: r.payload_hash === null ? null : Buffer.from(r.payload_hash, 'hex'),
    prev_hash: Buffer.from(r.prev_hash, 'hex'),
    hash: Buffer.from(r.hash, 'hex'),
    sig: Buffer.from(r.sig, 'base64'),
    key_id: Buffer.from(r.key_id, 'hex'),
  };
}

/** A served record from a stored row. */
export function rowRecord(row: RecordRow): AuditRecord {
  return {
    id: uuidText(row.id),
    tenant: row.tenant_id,
    seq: Number(row.seq),
    occurred_at: row.occurred_at,
    actor: row.actor,
    actor_kind: row.actor_kind,
    action: row.action,
    target_kind: row.target_kind,
    target_id: row.target_id,
    meta: row.meta,
    meta_blind: row.meta_blind === null ? null : hex(row.meta_blind),
    meta_commitment: hex(row.meta_commitment),
    payload_hash: row.payload_hash === null ? null : hex(row.payload_hash),
    prev_hash: hex(row.prev_hash),
    hash: hex(row.hash),
    sig: Buffer.from(row.sig.buffer, row.sig.byteOffset, row.sig.byteLength).toString('base64'),
    key_id: hex(row.key_id),
  };
}

/** The chain's head from the heads table, or null for a chain never appended to. */
export async function readHead(tx: Tx, tenant: string): Promise<ChainTail | null> {
  const row = await tx.selectFrom('audit_heads').select(['seq', 'hash']).where('tenant_id', '=', tenant).executeTakeFirst();
  return row === undefined ? null : { seq: Number(row.seq), hash: hex(row.hash) };
}

// 17 columns per row: 60 rows stay under every driver's bound-parameter limit with room to spare
// and keep the statement text (compiled per call) small.
const INSERT_CHUNK = 60;

/** Insert sealed records (contiguous, after `prev`) and move the head to the last one. */
export async function insertRecords(tx: Tx, tenant: string, records: readonly AuditRecord[], prev: ChainTail | null): Promise<void> {
  if (records.length === 0) return;
  for (let off = 0; off < records.length; off += INSERT_CHUNK) {
    await tx.insertInto('audit_records').values(records.slice(off, off + INSERT_CHUNK).map(recordRow)).execute();
  }
  const last = records[records.length - 1] as AuditRecord;
  const hash = Buffer.from(last.hash, 'hex');
  if (prev === null) {
    await tx.insertInto('audit_heads').values({ tenant_id: tenant, seq: last.seq, hash }).execute();
  } else {
    const res = await tx.updateTable('audit_heads').set({ seq: last.seq, hash }).where('tenant_id', '=', tenant).where('seq', '=', prev.seq).executeTakeFirst();
    // The head moved under us: the batch was sealed on a stale tail. The caller re-reads under its lock, so this is a bug guard.
    if (Number(res.numUpdatedRows) !== 1) throw new Error(`audit head of ${tenant} is not at seq ${prev.seq}`);
  }
}

/** Records of one chain from `fromSeq` ascending, at most `limit`, optionally filtered. */
export async function readRecords(tx: Tx, tenant: string, fromSeq: number, limit: number, filter: RecordFilter = {}): Promise<AuditRecord[]> {
  let q = tx.selectFrom('audit_records').selectAll().where('tenant_id', '=', tenant).where('seq', '>=', fromSeq);
  if (filter.action !== undefined && filter.action !== '') {
    // A prefix range instead of LIKE: no wildcard escaping, and the comparison is byte-wise on both backends.
    q = q.where('action', '>=', filter.action).where('action', '<', `${filter.action}\u{10FFFF}`);
  }
  if (filter.actor !== undefined) q = q.where('actor', '=', filter.actor);
  if (filter.target_kind !== undefined) q = q.where('target_kind', '=', filter.target_kind);
  if (filter.target_id !== undefined) q = q.where('target_id', '=', filter.target_id);
  if (filter.since !== undefined) q = q.where('occurred_at', '>=', filter.since);
  if (filter.until !== undefined) q = q.where('occurred_at', '<', filter.until);
  const rows = await q.orderBy('seq', 'asc').limit(limit).execute();
  return rows.map((r) => rowRecord(r as RecordRow));
}

/** Records with seq in [fromSeq, toSeq] ascending, unfiltered (verification reads). */
export async function readRange(tx: Tx, tenant: string, fromSeq: number, toSeq: number): Promise<AuditRecord[]> {
  const rows = await tx
    .selectFrom('audit_records')
    .selectAll()
    .where('tenant_id', '=', tenant)
    .where('seq', '>=', fromSeq)
    .where('seq', '<=', toSeq)
    .orderBy('seq', 'asc')
    .execute();
  return rows.map((r) => rowRecord(r as RecordRow));
}

/** The stored hash of one record, or null. */
export async function readHashAt(tx: Tx, tenant: string, seq: number): Promise<string | null> {
  const row = await tx.selectFrom('audit_records').select('hash').where('tenant_id', '=', tenant).where('seq', '=', seq).executeTakeFirst();
  return row === undefined ? null : hex(row.hash);
}

// ---- SQLite fast path (Store.sqliteTransaction): prepared statements, prepared once per connection ----

const COLUMNS = ['tenant_id', 'seq', 'id', 'occurred_at', 'actor', 'actor_kind', 'action', 'target_kind', 'target_id', 'meta', 'meta_blind', 'meta_commitment', 'payload_hash', 'prev_hash', 'hash', 'sig', 'key_id'] as const;
// Rows per multi-row INSERT: fewer statement executions per batch (17 × 32 parameters, well under SQLite's limit).
const MULTI = 32;

interface SqliteStatements {
  head: ReturnType<SqliteHandle['prepare']>;
  one: ReturnType<SqliteHandle['prepare']>;
  many: ReturnType<SqliteHandle['prepare']>;
  insertHead: ReturnType<SqliteHandle['prepare']>;
  updateHead: ReturnType<SqliteHandle['prepare']>;
}

const statements = new WeakMap<SqliteHandle, SqliteStatements>();

function prepared(db: SqliteHandle): SqliteStatements {
  let s = statements.get(db);
  if (s === undefined) {
    const row = `(${COLUMNS.map(() => '?').join(', ')})`;
    const insert = `insert into audit_records (${COLUMNS.join(', ')}) values `;
    s = {
      head: db.prepare('select seq, hash from audit_heads where tenant_id = ?'),
      one: db.prepare(insert + row),
      many: db.prepare(insert + Array.from({ length: MULTI }, () => row).join(', ')),
      insertHead: db.prepare('insert into audit_heads (tenant_id, seq, hash) values (?, ?, ?)'),
      updateHead: db.prepare('update audit_heads set seq = ?, hash = ? where tenant_id = ? and seq = ?'),
    };
    statements.set(db, s);
  }
  return s;
}

function pushRow(out: unknown[], r: AuditRecord): void {
  out.push(
    r.tenant,
    r.seq,
    uuidBytes(r.id),
    r.occurred_at,
    r.actor,
    r.actor_kind,
    r.action,
    r.target_kind,
    r.target_id,
    r.meta,
    r.meta_blind === null ? null : Buffer.from(r.meta_blind, 'hex'),
    Buffer.from(r.meta_commitment, 'hex'),
    r.payload_hash === null ? null : Buffer.from(r.payload_hash, 'hex'),
    Buffer.from(r.prev_hash, 'hex'),
    Buffer.from(r.hash, 'hex'),
    Buffer.from(r.sig, 'base64'),
    Buffer.from(r.key_id, 'hex'),
  );
}

/** {@link readHead} on a raw SQLite connection inside `Store.sqliteTransaction`. */
export function sqliteReadHead(db: SqliteHandle, tenant: string): ChainTail | null {
  const row = prepared(db).head.get(tenant) as { seq: number; hash: Buffer } | undefined;
  return row === undefined ? null : { seq: Number(row.seq), hash: hex(row.hash) };
}

/** {@link insertRecords} on a raw SQLite connection inside `Store.sqliteTransaction`. */
export function sqliteInsertRecords(db: SqliteHandle, tenant: string, records: readonly AuditRecord[], prev: ChainTail | null): void {
  if (records.length === 0) return;
  const s = prepared(db);
  let i = 0;
  const params: unknown[] = [];
  for (; i + MULTI <= records.length; i += MULTI) {
    params.length = 0;
    for (let j = i; j < i + MULTI; j++) pushRow(params, records[j] as AuditRecord);
    s.many.run(...params);
  }
  for (; i < records.length; i++) {
    params.length = 0;
    pushRow(params, records[i] as AuditRecord);
    s.one.run(...params);
  }
  const last = records[records.length - 1] as AuditRecord;
  const hash = Buffer.from(last.hash, 'hex');
  if (prev === null) s.insertHead.run(tenant, last.seq, hash);
  else if (s.updateHead.run(last.seq, hash, tenant, prev.seq).changes !== 1) throw new Error(`audit head of ${tenant} is not at seq ${prev.seq}`);
}

/** `select` list of {@link sqliteRangeReader}, in {@link COLUMNS} order. */
const RANGE_SQL = `select ${COLUMNS.join(', ')} from audit_records where tenant_id = ? and seq between ? and ? order by seq`;

/**
 * A reader of seq ranges on a raw SQLite handle (a verification worker's own read-only connection):
 * rows come back as arrays (no per-row objects from the driver) and are decoded straight into records.
 */
export function sqliteRangeReader(db: { prepare(source: string): { raw(on: boolean): { all(...params: unknown[]): unknown[] } } }): (tenant: string, fromSeq: number, toSeq: number) => AuditRecord[] {
  const stmt = db.prepare(RANGE_SQL).raw(true);
  return (tenant, fromSeq, toSeq) => {
    const rows = stmt.all(tenant, fromSeq, toSeq) as unknown[][];
    const out = new Array<AuditRecord>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i] as [string, number, Buffer, string, string, string, string, string, string, string | null, Buffer | null, Buffer, Buffer | null, Buffer, Buffer, Buffer, Buffer];
      out[i] = {
        id: uuidText(r[2]),
        tenant: r[0],
        seq: Number(r[1]),
        occurred_at: r[3],
        actor: r[4],
        actor_kind: r[5],
        action: r[6],
        target_kind: r[7],
        target_id: r[8],
        meta: r[9],
        meta_blind: r[10] === null ? null : r[10].toString('hex'),
        meta_commitment: r[11].toString('hex'),
        payload_hash: r[12] === null ? null : r[12].toString('hex'),
        prev_hash: r[13].toString('hex'),
        hash: r[14].toString('hex'),
        sig: r[15].toString('base64'),
        key_id: r[16].toString('hex'),
      };
    }
    return out;
  };
}
