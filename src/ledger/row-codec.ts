/**
 * How a sealed {@link AuditRecord} is stored and served: rows ↔ records on both backends. `prev_hash`
 * is not a column (the previous row's `hash`), `meta_commitment` is stored only once meta is erased;
 * the storage layout is described in ledger-store.ts.
 */
import { SqliteAdapter, sql, type Insertable, type Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { AuditRecordsTable } from '../store/schema-ledger.js';
import type { AuditRecord } from './record.js';
import { ZERO_HASH, metaCommitment } from './preimage.js';

/** A transaction (or, for read-only worker connections, a Kysely instance). */
export type Tx = Kysely<Database>;

/** Seq bits of an SQLite `pos`: a chain holds at most 2^40 - 1 records. */
export const SEQ_BITS = 40;
export const SEQ_SPAN = 2 ** SEQ_BITS;
/** Largest seq a chain can reach on SQLite (about 1.1 × 10^12). */
export const MAX_SEQ = SEQ_SPAN - 1;

/** A stored row as both backends return it (seq may be a string on Postgres). */
export interface StoredRow {
  seq: number | string;
  id: Uint8Array;
  occurred_at: string;
  actor: string;
  actor_kind: string;
  action: string;
  target_kind: string;
  target_id: string;
  meta: string | null;
  meta_blind: Uint8Array | null;
  meta_commitment: Uint8Array | null;
  payload_hash: Uint8Array | null;
  hash: Uint8Array;
  sig: Uint8Array;
  key_id: Uint8Array;
  /** the previous row's hash, when the query selected it (null at seq 1 or when that row is gone) */
  prev_hash?: Uint8Array | null;
}

export function buf(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

export function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replaceAll('-', ''), 'hex');
}

function uuidText(b: Uint8Array): string {
  const h = buf(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The stored commitment: only when there is no blind to recompute it from (erased meta). */
export function storedCommitment(r: AuditRecord): Buffer | null {
  return r.meta_blind === null ? Buffer.from(r.meta_commitment, 'hex') : null;
}

/** The served commitment of a row: recomputed from blind + meta, or the one stored at erasure. */
function commitmentHex(row: Pick<StoredRow, 'meta' | 'meta_blind' | 'meta_commitment'>): string {
  if (row.meta_blind !== null) return metaCommitment(row.meta_blind, row.meta ?? '').toString('hex');
  return row.meta_commitment === null ? '' : buf(row.meta_commitment).toString('hex');
}

/**
 * The served record of a stored row. `prev` is the previous record's hash (null: 32 zeros, as at
 * seq 1, or unknown because that row is missing — verification then reports the gap by seq).
 */
export function rowRecord(tenant: string, row: StoredRow, prev: Uint8Array | null): AuditRecord {
  return {
    id: uuidText(row.id),
    tenant,
    seq: Number(row.seq),
    occurred_at: row.occurred_at,
    actor: row.actor,
    actor_kind: row.actor_kind,
    action: row.action,
    target_kind: row.target_kind,
    target_id: row.target_id,
    meta: row.meta,
    meta_blind: row.meta_blind === null ? null : buf(row.meta_blind).toString('hex'),
    meta_commitment: commitmentHex(row),
    payload_hash: row.payload_hash === null ? null : buf(row.payload_hash).toString('hex'),
    prev_hash: buf(prev ?? ZERO_HASH).toString('hex'),
    hash: buf(row.hash).toString('hex'),
    sig: buf(row.sig).toString('base64'),
    key_id: buf(row.key_id).toString('hex'),
  };
}

/** Records of contiguous rows: each row's prev is the row before it; the first row's is `prev0`. */
export function chainRecords(tenant: string, rows: readonly StoredRow[], prev0: Uint8Array | null): AuditRecord[] {
  const out = new Array<AuditRecord>(rows.length);
  let prev = prev0;
  let prevSeq = rows.length > 0 ? Number((rows[0] as StoredRow).seq) - 1 : 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as StoredRow;
    const seq = Number(row.seq);
    // A missing row in between: the stored predecessor is unknown, serve zeros (verify reports the gap).
    out[i] = rowRecord(tenant, row, seq === prevSeq + 1 ? prev : null);
    prev = row.hash;
    prevSeq = seq;
  }
  return out;
}

export function isSqlite(tx: Tx): boolean {
  return tx.getExecutor().adapter instanceof SqliteAdapter;
}

/** The insert row of a sealed record (Postgres). */
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
    meta_commitment: storedCommitment(r),
    payload_hash: r.payload_hash === null ? null : Buffer.from(r.payload_hash, 'hex'),
    hash: Buffer.from(r.hash, 'hex'),
    sig: Buffer.from(r.sig, 'base64'),
    key_id: Buffer.from(r.key_id, 'hex'),
  };
}

export const PG_COLUMNS = sql.raw(
  'r.seq, r.id, r.occurred_at, r.actor, r.actor_kind, r.action, r.target_kind, r.target_id, r.meta, r.meta_blind, r.meta_commitment, ' +
    'r.payload_hash, r.hash, r.sig, r.key_id',
);

/** Select list of a record row on SQLite, in {@link StoredRow} order. */
export const SQLITE_SELECT =
  `(r.pos & ${SEQ_SPAN - 1}) as seq, r.id, r.occurred_at, r.actor, r.actor_kind, r.action, r.target_kind, r.target_id, r.meta, ` +
  `r.meta_blind, r.meta_commitment, r.payload_hash, r.hash, r.sig, r.key_id`;
export const INSERT_COLUMNS = [
  'pos',
  'id',
  'occurred_at',
  'actor',
  'actor_kind',
  'action',
  'target_kind',
  'target_id',
  'meta',
  'meta_blind',
  'meta_commitment',
  'payload_hash',
  'hash',
  'sig',
  'key_id',
] as const;

/** The bound parameters of one SQLite insert row ({@link INSERT_COLUMNS} order), appended to `out`. */
export function pushRow(out: unknown[], chainBase: bigint, r: AuditRecord): void {
  if (r.seq > MAX_SEQ) throw new RangeError(`audit chain ${r.tenant} is full (seq ${r.seq} > ${MAX_SEQ})`);
  out.push(
    chainBase | BigInt(r.seq),
    uuidBytes(r.id),
    r.occurred_at,
    r.actor,
    r.actor_kind,
    r.action,
    r.target_kind,
    r.target_id,
    r.meta,
    r.meta_blind === null ? null : Buffer.from(r.meta_blind, 'hex'),
    storedCommitment(r),
    r.payload_hash === null ? null : Buffer.from(r.payload_hash, 'hex'),
    Buffer.from(r.hash, 'hex'),
    Buffer.from(r.sig, 'base64'),
    Buffer.from(r.key_id, 'hex'),
  );
}
