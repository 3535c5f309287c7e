/**
 * The SQL of the ledger tables, and rows ↔ {@link AuditRecord}. Every statement that touches
 * `audit_records` lives here (the verification and export workers read through this file too).
 *
 * Stored once, derived on read (bytes per record, issue 4): `prev_hash` is not a column (it is the
 * previous row's `hash`, read with the row or carried along a range), and `meta_commitment` is stored
 * only once a record's meta has been erased (blind destroyed); while the blind exists it is
 * recomputed from blind + meta. A tampered meta or blind therefore shows up as `hash-mismatch` of its
 * record, and a deleted row as `seq-gap`. Hashes, blinds, signatures, key ids and record ids are raw
 * bytes, served as the hex / base64 text DECISIONS.md fixes.
 *
 * SQLite layout (migration 3): `audit_records` is a rowid table keyed by `pos = chain << 40 | seq`,
 * where `chain` is the small number `audit_heads` assigns to each tenant on its first append. Appends
 * land at the right edge of the table's b-tree, which SQLite packs full, and no tenant text or
 * separate key is stored per row. Postgres keeps `(tenant_id, seq)` (RLS needs tenant_id per row).
 * Every function runs inside a caller's transaction, tenant-bound (`store.withTenant`) so Postgres RLS
 * confines it.
 */
import { SqliteAdapter, sql, type Insertable, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../store/schema.js';
import type { SqliteHandle } from '../store/store-types.js';
import type { AuditRecordsTable } from '../store/schema-ledger.js';
import type { AuditRecord } from './record.js';
import type { ChainTail } from './chain.js';
import { META_PREFIX, ZERO_HASH, ZERO_HASH_HEX, metaCommitment, metaCommitmentFromHex, metaCommitmentFromLowerHex } from './preimage.js';

/** A transaction (or, for read-only worker connections, a Kysely instance). */
type Tx = Kysely<Database>;

/** Seq bits of an SQLite `pos`: a chain holds at most 2^40 - 1 records. */
export const SEQ_BITS = 40;
const SEQ_SPAN = 2 ** SEQ_BITS;
/** Largest seq a chain can reach on SQLite (about 1.1 × 10^12). */
export const MAX_SEQ = SEQ_SPAN - 1;

/** Filters of `GET /v1/audit` and the export (all optional, combined with AND). */
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
  /** seq ≤ toSeq (export pages; without it a selective filter scans to the chain's end) */
  toSeq?: number;
}

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

function buf(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replaceAll('-', ''), 'hex');
}

function uuidText(b: Uint8Array): string {
  const h = buf(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The stored commitment: only when there is no blind to recompute it from (erased meta). */
function storedCommitment(r: AuditRecord): Buffer | null {
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
function chainRecords(tenant: string, rows: readonly StoredRow[], prev0: Uint8Array | null): AuditRecord[] {
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

function isSqlite(tx: Tx): boolean {
  return tx.getExecutor().adapter instanceof SqliteAdapter;
}

// ---- Postgres (and any Kysely dialect keyed by tenant_id, seq) ----

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

const PG_COLUMNS = sql.raw('r.seq, r.id, r.occurred_at, r.actor, r.actor_kind, r.action, r.target_kind, r.target_id, r.meta, r.meta_blind, r.meta_commitment, r.payload_hash, r.hash, r.sig, r.key_id');

/**
 * The list filters as (left-hand side, bound value) terms, e.g. `['r.actor =', 'user:…']`: one
 * definition for both backends' SQL (column names are the same) and for the workers' prepared text.
 */
function filterTerms(filter: RecordFilter): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (filter.action !== undefined && filter.action !== '') {
    // A prefix range instead of LIKE: no wildcard escaping, and the comparison is byte-wise on both backends.
    out.push(['r.action >=', filter.action], ['r.action <', `${filter.action}\u{10FFFF}`]);
  }
  if (filter.actor !== undefined) out.push(['r.actor =', filter.actor]);
  if (filter.target_kind !== undefined) out.push(['r.target_kind =', filter.target_kind]);
  if (filter.target_id !== undefined) out.push(['r.target_id =', filter.target_id]);
  if (filter.since !== undefined) out.push(['r.occurred_at >=', filter.since]);
  if (filter.until !== undefined) out.push(['r.occurred_at <', filter.until]);
  return out;
}

function filterSql(filter: RecordFilter): RawBuilder<unknown>[] {
  return filterTerms(filter).map(([lhs, value]) => sql`${sql.raw(lhs)} ${value}`);
}

function hasRowFilter(filter: RecordFilter): boolean {
  return (filter.action !== undefined && filter.action !== '') || filter.actor !== undefined || filter.target_kind !== undefined || filter.target_id !== undefined || filter.since !== undefined || filter.until !== undefined;
}

/** Rows of one chain with seq in [fromSeq, toSeq], ascending; `withPrev` adds each row's predecessor hash. */
async function selectRows(tx: Tx, tenant: string, fromSeq: number, toSeq: number, filter: RecordFilter, limit: number | null, withPrev: boolean): Promise<StoredRow[]> {
  const conds = filterSql(filter);
  const limitSql = limit === null ? sql`` : sql` limit ${limit}`;
  if (isSqlite(tx)) {
    const base = sql`(select chain * ${SEQ_SPAN} from audit_heads where tenant_id = ${tenant})`;
    const prev = withPrev ? sql`, (select p.hash from audit_records p where p.pos = r.pos - 1) as prev_hash` : sql``;
    const where = [sql`r.pos between ${base} + ${fromSeq} and ${base} + ${Math.min(toSeq, MAX_SEQ)}`, ...conds];
    const q = sql<StoredRow>`select ${sql.raw(SQLITE_SELECT)}${prev} from audit_records r where ${sql.join(where, sql` and `)} order by r.pos${limitSql}`;
    return (await q.execute(tx)).rows;
  }
  const prev = withPrev ? sql`, (select p.hash from audit_records p where p.tenant_id = r.tenant_id and p.seq = r.seq - 1) as prev_hash` : sql``;
  const where = [sql`r.tenant_id = ${tenant}`, sql`r.seq >= ${fromSeq}`, sql`r.seq <= ${toSeq}`, ...conds];
  const q = sql<StoredRow>`select ${PG_COLUMNS}${prev} from audit_records r where ${sql.join(where, sql` and `)} order by r.seq${limitSql}`;
  return (await q.execute(tx)).rows;
}

/** The chain's head from the heads table, or null for a chain never appended to. */
export async function readHead(tx: Tx, tenant: string): Promise<ChainTail | null> {
  const row = await tx.selectFrom('audit_heads').select(['seq', 'hash']).where('tenant_id', '=', tenant).executeTakeFirst();
  return row === undefined ? null : { seq: Number(row.seq), hash: buf(row.hash).toString('hex') };
}

// 16 columns per row: 60 rows stay under every driver's bound-parameter limit with room to spare.
const INSERT_CHUNK = 60;

/**
 * Insert sealed records (contiguous, after `prev`) and move the head to the last one. The append
 * pipeline on SQLite uses {@link sqliteInsertRecords} (prepared statements); this is the path of
 * Postgres and of callers that hold only a Kysely transaction.
 */
export async function insertRecords(tx: Tx, tenant: string, records: readonly AuditRecord[], prev: ChainTail | null): Promise<void> {
  if (records.length === 0) return;
  const last = records[records.length - 1] as AuditRecord;
  const hash = Buffer.from(last.hash, 'hex');
  if (isSqlite(tx)) {
    // The records first, then the head (migration 19: a head only moves to records already there).
    // A new chain takes the next free number; the caller's write transaction makes max()+1 race-free.
    const known = (await sql<{ chain: number }>`select chain from audit_heads where tenant_id = ${tenant}`.execute(tx)).rows[0]?.chain;
    if ((known === undefined) !== (prev === null)) throw new Error(`audit head of ${tenant} is not at seq ${prev?.seq ?? 0}`);
    const chain = known ?? ((await sql<{ next: number }>`select coalesce(max(chain), 0) + 1 as next from audit_heads`.execute(tx)).rows[0]?.next as number);
    const base = BigInt(chain) << BigInt(SEQ_BITS);
    for (let off = 0; off < records.length; off += INSERT_CHUNK) {
      const rows = records.slice(off, off + INSERT_CHUNK).map((r) => {
        const params: unknown[] = [];
        pushRow(params, base, r);
        return sql`(${sql.join(params)})`;
      });
      await sql`insert into audit_records (${sql.raw(INSERT_COLUMNS.join(', '))}) values ${sql.join(rows)}`.execute(tx);
    }
    if (prev === null) {
      await sql`insert into audit_heads (tenant_id, chain, seq, hash) values (${tenant}, ${chain}, ${last.seq}, ${hash})`.execute(tx);
    } else {
      const res = await sql`update audit_heads set seq = ${last.seq}, hash = ${hash} where tenant_id = ${tenant} and seq = ${prev.seq}`.execute(tx);
      if (Number(res.numAffectedRows) !== 1) throw new Error(`audit head of ${tenant} is not at seq ${prev.seq}`);
    }
    return;
  }
  for (let off = 0; off < records.length; off += INSERT_CHUNK) {
    await tx.insertInto('audit_records').values(records.slice(off, off + INSERT_CHUNK).map(recordRow)).execute();
  }
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
  const toSeq = filter.toSeq ?? MAX_SEQ;
  if (!hasRowFilter(filter)) return readRange(tx, tenant, fromSeq, toSeq, limit);
  // Filtered rows are not contiguous: each brings its predecessor's hash along.
  const rows = await selectRows(tx, tenant, fromSeq, toSeq, filter, limit, true);
  return rows.map((r) => rowRecord(tenant, r, r.prev_hash ?? null));
}

/** Records with seq in [fromSeq, toSeq] ascending (at most `limit`), unfiltered. */
export async function readRange(tx: Tx, tenant: string, fromSeq: number, toSeq: number, limit: number | null = null): Promise<AuditRecord[]> {
  // The row before the range gives the first record its prev_hash.
  const lo = Math.max(1, fromSeq - 1);
  const rows = await selectRows(tx, tenant, lo, toSeq, {}, limit === null ? null : limit + (lo < fromSeq ? 1 : 0), false);
  const first = rows[0];
  if (lo < fromSeq && first !== undefined && Number(first.seq) === lo) return chainRecords(tenant, rows.slice(1), first.hash);
  return chainRecords(tenant, rows, null);
}

/** The stored hash of one record, or null. */
export async function readHashAt(tx: Tx, tenant: string, seq: number): Promise<string | null> {
  const rows = await selectRows(tx, tenant, seq, seq, {}, 1, false);
  const row = rows[0];
  return row === undefined ? null : buf(row.hash).toString('hex');
}

/**
 * Thrown when a chain's head does not name its last stored record (its hash differs, or records lie
 * beyond it): the heads table was changed behind the ledger's back. Nothing can be appended to that
 * chain until an operator has looked (`GET /v1/audit/verify` names the break), and no change that
 * would need a record there may commit (ledger/audit-intent.ts).
 */
export class ChainHeadError extends Error {
  override readonly name = 'ChainHeadError';
  constructor(readonly tenant: string, detail: string) {
    super(`audit chain ${tenant} cannot be appended to: ${detail}`);
  }
}

/** What is wrong with a head against the stored records, or null when it names the last record. */
function headProblem(head: ChainTail, stored: Uint8Array | null | undefined, beyond: boolean): string | null {
  if (stored === undefined || stored === null) return `its head names seq ${head.seq}, which is not stored`;
  if (buf(stored).toString('hex') !== head.hash) return `its head's hash is not the hash of record ${head.seq}`;
  if (beyond) return `records are stored beyond its head (seq ${head.seq})`;
  return null;
}

/**
 * Throws {@link ChainHeadError} unless `tenant`'s head names its last stored record (any backend,
 * inside the caller's transaction, which must be bound to that tenant on Postgres). One statement,
 * so one snapshot: an append committing meanwhile is never mistaken for records beyond the head.
 */
export async function assertHeadConsistent(tx: Tx, tenant: string): Promise<void> {
  type Row = { seq: number | string | null; hash: Uint8Array | null; rec_hash: Uint8Array | null; beyond: number | boolean };
  const row = isSqlite(tx)
    ? (
        await sql<Row>`select h.seq, h.hash, r.hash as rec_hash,
            exists (select 1 from audit_records b where b.pos = ((h.chain << ${SEQ_BITS}) | h.seq) + 1) as beyond
          from audit_heads h left join audit_records r on r.pos = ((h.chain << ${SEQ_BITS}) | h.seq)
          where h.tenant_id = ${tenant}`.execute(tx)
      ).rows[0]
    : (
        await sql<Row>`select h.seq, h.hash, r.hash as rec_hash,
            exists (select 1 from audit_records b where b.tenant_id = ${tenant} and b.seq = coalesce(h.seq, 0) + 1) as beyond
          from (select 1) as one
          left join audit_heads h on h.tenant_id = ${tenant}
          left join audit_records r on r.tenant_id = ${tenant} and r.seq = h.seq`.execute(tx)
      ).rows[0];
  // SQLite rows are keyed by the head's chain number, so a chain without a head has no rows.
  if (row === undefined || row.seq === null || row.hash === null) {
    if (row !== undefined && (row.beyond === true || row.beyond === 1)) throw new ChainHeadError(tenant, 'records are stored but it has no head');
    return;
  }
  const head = { seq: Number(row.seq), hash: buf(row.hash).toString('hex') };
  const problem = headProblem(head, row.rec_hash, row.beyond === true || row.beyond === 1);
  if (problem !== null) throw new ChainHeadError(tenant, problem);
}

/**
 * {@link assertHeadConsistent} for `chain` from a transaction bound to any tenant (or none): on
 * Postgres, row-level security shows only the bound tenant's rows, so the two lookups run with
 * `app.tenant_id` set to the chain's tenant and then put back.
 */
export async function assertChainAppendable(tx: Tx, chain: string): Promise<void> {
  if (isSqlite(tx)) return assertHeadConsistent(tx, chain);
  const bound = (await sql<{ t: string | null }>`select current_setting('app.tenant_id', true) as t`.execute(tx)).rows[0]?.t ?? '';
  if (bound === chain) return assertHeadConsistent(tx, chain);
  await sql`select set_config('app.tenant_id', ${chain}, true)`.execute(tx);
  try {
    await assertHeadConsistent(tx, chain);
  } finally {
    // After a SQL error the transaction is aborted and rolls back anyway: keep that error.
    await sql`select set_config('app.tenant_id', ${bound}, true)`.execute(tx).catch(() => undefined);
  }
}

// ---- SQLite fast path (Store.sqliteTransaction and read-only worker handles): prepared statements ----

/** Select list of a record row on SQLite, in {@link StoredRow} order. */
const SQLITE_SELECT = `(r.pos & ${SEQ_SPAN - 1}) as seq, r.id, r.occurred_at, r.actor, r.actor_kind, r.action, r.target_kind, r.target_id, r.meta, r.meta_blind, r.meta_commitment, r.payload_hash, r.hash, r.sig, r.key_id`;
const INSERT_COLUMNS = ['pos', 'id', 'occurred_at', 'actor', 'actor_kind', 'action', 'target_kind', 'target_id', 'meta', 'meta_blind', 'meta_commitment', 'payload_hash', 'hash', 'sig', 'key_id'] as const;
// Rows per multi-row INSERT: fewer statement executions per batch (15 × 32 parameters, well under SQLite's limit).
const MULTI = 32;

interface SqliteStatements {
  head: ReturnType<SqliteHandle['prepare']>;
  one: ReturnType<SqliteHandle['prepare']>;
  many: ReturnType<SqliteHandle['prepare']>;
  nextChain: ReturnType<SqliteHandle['prepare']>;
  hashAt: ReturnType<SqliteHandle['prepare']>;
  insertHead: ReturnType<SqliteHandle['prepare']>;
  updateHead: ReturnType<SqliteHandle['prepare']>;
}

const statements = new WeakMap<SqliteHandle, SqliteStatements>();

function prepared(db: SqliteHandle): SqliteStatements {
  let s = statements.get(db);
  if (s === undefined) {
    const row = `(${INSERT_COLUMNS.map(() => '?').join(', ')})`;
    const insert = `insert into audit_records (${INSERT_COLUMNS.join(', ')}) values `;
    s = {
      head: db.prepare('select seq, hash, chain from audit_heads where tenant_id = ?'),
      one: db.prepare(insert + row),
      many: db.prepare(insert + Array.from({ length: MULTI }, () => row).join(', ')),
      // A new chain takes the next free number; BEGIN IMMEDIATE makes max()+1 race-free.
      nextChain: db.prepare('select coalesce(max(chain), 0) + 1 as chain from audit_heads'),
      hashAt: db.prepare('select hash from audit_records where pos = ?'),
      insertHead: db.prepare('insert into audit_heads (tenant_id, chain, seq, hash) values (?, ?, ?, ?)'),
      updateHead: db.prepare('update audit_heads set seq = ?, hash = ? where tenant_id = ? and seq = ?'),
    };
    statements.set(db, s);
  }
  return s;
}

function pushRow(out: unknown[], chainBase: bigint, r: AuditRecord): void {
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

/** {@link readHead} on a raw SQLite connection inside `Store.sqliteTransaction`. */
export function sqliteReadHead(db: SqliteHandle, tenant: string): ChainTail | null {
  const row = prepared(db).head.get(tenant) as { seq: number; hash: Buffer } | undefined;
  return row === undefined ? null : { seq: Number(row.seq), hash: row.hash.toString('hex') };
}

/** {@link assertHeadConsistent} on a raw SQLite connection inside `Store.sqliteTransaction`. */
export function sqliteAssertHeadConsistent(db: SqliteHandle, tenant: string): void {
  const row = prepared(db).head.get(tenant) as { seq: number; hash: Buffer; chain: number } | undefined;
  if (row === undefined) return;
  const head = { seq: Number(row.seq), hash: row.hash.toString('hex') };
  const base = BigInt(row.chain) << BigInt(SEQ_BITS);
  const s = prepared(db);
  const stored = (s.hashAt.get(base | BigInt(head.seq)) as { hash: Buffer } | undefined)?.hash;
  const beyond = s.hashAt.get(base | BigInt(head.seq + 1)) !== undefined;
  const problem = headProblem(head, stored, beyond);
  if (problem !== null) throw new ChainHeadError(tenant, problem);
}

/** {@link insertRecords} on a raw SQLite connection inside `Store.sqliteTransaction`. */
export function sqliteInsertRecords(db: SqliteHandle, tenant: string, records: readonly AuditRecord[], prev: ChainTail | null): void {
  if (records.length === 0) return;
  const s = prepared(db);
  const last = records[records.length - 1] as AuditRecord;
  const hash = Buffer.from(last.hash, 'hex');
  // The records first, then the head (migration 19: a head only moves to records already there).
  const head = s.head.get(tenant) as { seq: number; chain: number } | undefined;
  if ((head === undefined) !== (prev === null) || (head !== undefined && prev !== null && Number(head.seq) !== prev.seq)) {
    throw new Error(`audit head of ${tenant} is not at seq ${prev?.seq ?? 0}`);
  }
  const chain = head === undefined ? (s.nextChain.get() as { chain: number }).chain : head.chain;
  const base = BigInt(chain) << BigInt(SEQ_BITS);
  let i = 0;
  const params: unknown[] = [];
  for (; i + MULTI <= records.length; i += MULTI) {
    params.length = 0;
    for (let j = i; j < i + MULTI; j++) pushRow(params, base, records[j] as AuditRecord);
    s.many.run(...params);
  }
  for (; i < records.length; i++) {
    params.length = 0;
    pushRow(params, base, records[i] as AuditRecord);
    s.one.run(...params);
  }
  if (head === undefined) s.insertHead.run(tenant, chain, last.seq, hash);
  else if (s.updateHead.run(last.seq, hash, tenant, (prev as ChainTail).seq).changes !== 1) throw new Error(`audit head of ${tenant} is not at seq ${(prev as ChainTail).seq}`);
}

/** The part of a read-only better-sqlite3 handle {@link sqlitePackedRangeReader} uses. */
export interface SqlitePackedHandle {
  prepare(source: string): { raw(on: boolean): { get(...params: unknown[]): unknown } };
}

/** A range of rows packed into one buffer by {@link sqlitePackedRangeReader}. */
export interface PackedRows {
  /** Rows in the range. */
  count: number;
  /** The rows back to back ({@link PACKED} layout); empty when there are none. */
  bytes: Buffer;
}

/**
 * Layout of one row of {@link sqlitePackedRangeReader}. A row starts with a flag byte. Flag 0: a
 * NOT NULL column was NULL (only possible with the schema rewritten), followed by u64be(seq) and
 * nothing else. Flag 1: u32be byte lengths of meta, meta_blind, meta_commitment, payload_hash, hash
 * (`0xffffffff` = NULL), then of key_id and sig in 'full' mode, then of the six hashed text fields
 * (occurred_at, actor, actor_kind, action, target_kind, target_id); then u64be(seq), the six text
 * fields' bytes, META_PREFIX ‖ blind ‖ meta (the meta commitment preimage, when there is a blind),
 * meta_commitment, payload_hash, hash, and key_id ‖ sig in 'full' mode. Each value is its stored
 * bytes (the table is STRICT: text columns hold UTF-8 text, blob columns blobs). All lengths go
 * through one printf per row: a printf per field cost SQLite 0.45 µs more per row.
 */
export const PACKED = { NULL: 0xffffffff, metaPrefix: META_PREFIX, textFields: 6 } as const;

/**
 * Rows of seq [fromSeq, toSeq] of a chain packed by SQLite into one buffer ({@link PACKED} layout):
 * the verification worker's path. One value crosses into JavaScript per range instead of a dozen
 * strings and Buffers per row (measured on 300k records: 3.0 → 1.0 µs per row read). A range whose
 * packed bytes exceed SQLite's value size limit is read in halves.
 */
export function sqlitePackedRangeReader(db: SqlitePackedHandle, columns: 'chain' | 'full'): (tenant: string, fromSeq: number, toSeq: number) => PackedRows {
  const len = (c: string) => `ifnull(octet_length(r.${c}), ${PACKED.NULL})`;
  const full = columns === 'full';
  const text = ['occurred_at', 'actor', 'actor_kind', 'action', 'target_kind', 'target_id'];
  const lengths = [...['meta', 'meta_blind', 'meta_commitment', 'payload_hash', 'hash', ...(full ? ['key_id', 'sig'] : [])].map(len), ...text.map((c) => `octet_length(r.${c})`)];
  const row =
    `unhex(printf('01${lengths.map(() => '%08x').join('')}%016x', ${lengths.join(', ')}, r.pos & ${SEQ_SPAN - 1}))` +
    ` || ${text.map((c) => `r.${c}`).join(' || ')}` +
    ` || x'${META_PREFIX.toString('hex')}' || ifnull(r.meta_blind, x'') || ifnull(r.meta, '') || ifnull(r.meta_commitment, x'') || ifnull(r.payload_hash, x'') || r.hash` +
    (full ? ' || r.key_id || r.sig' : '');
  // `||` yields NULL when a NOT NULL column is NULL: such a row becomes flag 0 instead of vanishing.
  const stmt = db
    .prepare(
      `select count(*), cast(group_concat(x, '') as blob) from (select coalesce(${row}, unhex(printf('00%016x', r.pos & ${SEQ_SPAN - 1}))) as x` +
        ` from audit_records r, (select chain * ${SEQ_SPAN} as base from audit_heads where tenant_id = ?) c where r.pos between c.base + ? and c.base + ? order by r.pos)`,
    )
    .raw(true);
  const read = (tenant: string, fromSeq: number, toSeq: number): PackedRows => {
    try {
      const [count, bytes] = stmt.get(tenant, fromSeq, toSeq) as [number, Buffer | null];
      return { count, bytes: bytes ?? Buffer.alloc(0) };
    } catch (err) {
      if (toSeq <= fromSeq || (err as { code?: unknown }).code !== 'SQLITE_TOOBIG') throw err;
      const mid = Math.floor((fromSeq + toSeq) / 2);
      const a = read(tenant, fromSeq, mid);
      const b = read(tenant, mid + 1, toSeq);
      return { count: a.count + b.count, bytes: Buffer.concat([a.bytes, b.bytes]) };
    }
  };
  return (tenant, fromSeq, toSeq) => read(tenant, fromSeq, Math.min(toSeq, MAX_SEQ));
}

/** Served-record columns on SQLite with the bytes already hex text: SQLite's hex() is cheaper than a Buffer per column and hex in JS (measured: 11 → 3.7 µs per row). */
const SQLITE_TEXT_SELECT = `(r.pos & ${SEQ_SPAN - 1}), lower(hex(r.id)), r.occurred_at, r.actor, r.actor_kind, r.action, r.target_kind, r.target_id, r.meta, lower(hex(r.meta_blind)), lower(hex(r.meta_commitment)), lower(hex(r.payload_hash)), lower(hex(r.hash)), r.sig, lower(hex(r.key_id))`;
/** Rows of one chain between two seqs (bound: tenant, fromSeq, toSeq). */
const SQLITE_CHAIN_RANGE = `from audit_records r, (select chain * ${SEQ_SPAN} as base from audit_heads where tenant_id = ?) c where r.pos between c.base + ? and c.base + ?`;

/** `hex(NULL)` is '' on SQLite. */
const orNull = (h: string): string | null => (h === '' ? null : h);

/** The served record of a {@link SQLITE_TEXT_SELECT} row; `prev` is the previous record's hex hash (null: zeros). */
function textRecord(tenant: string, a: unknown[], prev: string | null): AuditRecord {
  const id = a[1] as string;
  const meta = a[8] as string | null;
  const blind = orNull(a[9] as string);
  const sig = a[13] as Buffer;
  return {
    id: `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`,
    tenant,
    seq: a[0] as number,
    occurred_at: a[2] as string,
    actor: a[3] as string,
    actor_kind: a[4] as string,
    action: a[5] as string,
    target_kind: a[6] as string,
    target_id: a[7] as string,
    meta,
    meta_blind: blind,
    // Recomputed while the blind exists; the stored one after erasure.
    meta_commitment: blind === null ? (a[10] as string) : (metaCommitmentFromHex(blind, meta ?? '') ?? ''),
    payload_hash: orNull(a[11] as string),
    prev_hash: prev ?? ZERO_HASH_HEX,
    hash: a[12] as string,
    sig: sig.toString('base64'),
    key_id: a[14] as string,
  };
}

/** Visits records one by one (no page held in memory) and returns how many; see {@link sqliteRecordIterator}. */
export type RecordVisitor = (tenant: string, fromSeq: number, toSeq: number, filter: RecordFilter, visit: (record: AuditRecord) => void) => number;

/**
 * Records on a raw read-only SQLite handle (the export workers), decoded row by row as the statement
 * yields them. Unfiltered ranges read the record before the range too (the first prev_hash) and
 * carry each hash to the next record; filtered pages bring each predecessor's hash along. One
 * prepared statement per filter shape; values are bound parameters.
 */
export function sqliteRecordIterator(db: SqliteIterHandle): RecordVisitor {
  const statements = new Map<string, { iterate(...params: unknown[]): IterableIterator<unknown> }>();
  const statement = (key: string, text: string) => {
    let stmt = statements.get(key);
    if (stmt === undefined) {
      stmt = db.prepare(text).raw(true);
      statements.set(key, stmt);
    }
    return stmt;
  };
  return (tenant, fromSeq, toSeq, filter, visit) => {
    const to = Math.min(toSeq, MAX_SEQ);
    let n = 0;
    if (!hasRowFilter(filter)) {
      const stmt = statement('', `select ${SQLITE_TEXT_SELECT} ${SQLITE_CHAIN_RANGE} order by r.pos`);
      const lo = Math.max(1, fromSeq - 1);
      let prev: string | null = null;
      let prevSeq = fromSeq - 1;
      for (const row of stmt.iterate(tenant, lo, to)) {
        const a = row as unknown[];
        const seq = a[0] as number;
        if (seq >= fromSeq) {
          // A missing row in between: its successor's predecessor is unknown, served as zeros (verify reports the gap).
          visit(textRecord(tenant, a, seq === prevSeq + 1 ? prev : null));
          n++;
        }
        prev = a[12] as string;
        prevSeq = seq;
      }
      return n;
    }
    const terms = filterTerms(filter);
    const params = terms.map(([, value]) => value);
    const key = terms.map(([lhs]) => `${lhs} ?`).join(' and ');
    const stmt = statement(key, `select ${SQLITE_TEXT_SELECT}, lower(hex((select p.hash from audit_records p where p.pos = r.pos - 1))) ${SQLITE_CHAIN_RANGE} and ${key} order by r.pos`);
    for (const row of stmt.iterate(tenant, fromSeq, to, ...params)) {
      const a = row as unknown[];
      visit(textRecord(tenant, a, orNull(a[15] as string)));
      n++;
    }
    return n;
  };
}

/** The part of a read-only better-sqlite3 handle {@link sqliteRecordIterator} uses. */
export interface SqliteIterHandle {
  prepare(source: string): { raw(on: boolean): { iterate(...params: unknown[]): IterableIterator<unknown> } };
}

/**
 * Visits records like {@link RecordVisitor}, each with the row's stored text as `text` (see
 * {@link sqliteStoredRowIterator}); `text` is undefined for a row read through the per-column fallback.
 */
export type StoredRowVisitor = (
  tenant: string,
  fromSeq: number,
  toSeq: number,
  filter: RecordFilter,
  visit: (record: AuditRecord, text: string | undefined) => void,
) => number;

/**
 * A whole row as ONE string built in SQL, its columns joined by U+0001: better-sqlite3 creates one
 * JS value per row instead of fifteen, and no Buffer at all (the signature comes as hex and is
 * turned into base64 through a scratch buffer). The free texts come first, then the binary columns
 * as hex under one `lower()`. Measured on the export bench's ledger: 2.3 µs per row for the
 * per-column select with the signature blob, 1.15 µs for this one. Nullable texts go through
 * `hex()` ('' for NULL) or `ifnull` with the null flag as a part of its own, so every row has
 * exactly {@link STORED_PARTS} parts, the first {@link STORED_TEXT_PARTS} of them the texts.
 */
const SQLITE_STORED_ROW = `concat_ws(char(1), (r.pos & ${SEQ_SPAN - 1}), r.meta is null, r.occurred_at, r.actor, r.actor_kind, r.action, r.target_kind, r.target_id, ifnull(r.meta, ''), lower(concat_ws(char(1), hex(r.id), hex(r.meta_blind), hex(r.meta_commitment), hex(r.payload_hash), hex(r.hash), hex(r.key_id), hex(r.sig))))`;
const STORED_PARTS = 16;
const STORED_TEXT_PARTS = 9;

/** Scratch for the hex → base64 turn of a signature (Ed25519: 64 bytes; grown for longer ones). */
let sigScratch = Buffer.allocUnsafe(256);

function base64OfHex(hex: string): string {
  const len = hex.length >> 1;
  if (len > sigScratch.length) sigScratch = Buffer.allocUnsafe(len);
  const n = sigScratch.write(hex, 0, len, 'hex');
  return sigScratch.toString('base64', 0, n);
}

/**
 * {@link sqliteRecordIterator} for the export: the same records, read as one joined text per row
 * (see {@link SQLITE_STORED_ROW}) a page at a time, each handed over with the texts' part of it
 * (seq, null flag, occurred_at, actor, actor_kind, action, target_kind, target_id, meta). Every
 * other string field is hex, a dashed id or zeros, except `tenant` (the caller's) and `sig`
 * (base64), so one scan of `text` tells an encoder whether any field needs escaping. A row
 * whose free text holds U+0001 itself splits into more parts: it is read again through the
 * per-column statement (same record, `text` undefined).
 */
export function sqliteStoredRowIterator(db: SqlitePluckHandle): StoredRowVisitor {
  const statements = new Map<string, { all(...params: unknown[]): unknown[] }>();
  const statement = (key: string, text: string, pluck: boolean) => {
    let stmt = statements.get(key);
    if (stmt === undefined) {
      const prepared = db.prepare(text);
      stmt = pluck ? prepared.pluck(true) : prepared.raw(true);
      statements.set(key, stmt);
    }
    return stmt;
  };
  // The fallback for one row: the per-column select of sqliteRecordIterator.
  const columnsOf = (tenant: string, seq: number): unknown[] => {
    const row = statement('#one', `select ${SQLITE_TEXT_SELECT} ${SQLITE_CHAIN_RANGE}`, false).all(tenant, seq, seq)[0];
    if (row === undefined) throw new Error(`audit record ${seq} vanished during the export`);
    return row as unknown[];
  };
  const record = (tenant: string, p: string[], prev: string | null): AuditRecord => {
    const id = p[9] as string;
    const meta = p[1] === '1' ? null : (p[8] as string);
    const blind = orNull(p[10] as string);
    return {
      id: `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`,
      tenant,
      seq: Number(p[0]),
      occurred_at: p[2] as string,
      actor: p[3] as string,
      actor_kind: p[4] as string,
      action: p[5] as string,
      target_kind: p[6] as string,
      target_id: p[7] as string,
      meta,
      meta_blind: blind,
      // Recomputed while the blind exists; the stored one after erasure (as textRecord).
      meta_commitment: blind === null ? (p[11] as string) : (metaCommitmentFromLowerHex(blind, meta ?? '') ?? ''),
      payload_hash: orNull(p[12] as string),
      prev_hash: prev ?? ZERO_HASH_HEX,
      hash: p[13] as string,
      sig: base64OfHex(p[15] as string),
      key_id: p[14] as string,
    };
  };
  /** The length of the texts' part of a row: its first STORED_TEXT_PARTS parts and their separators. */
  const textsLength = (p: string[]): number => {
    let n = STORED_TEXT_PARTS - 1;
    for (let i = 0; i < STORED_TEXT_PARTS; i++) n += (p[i] as string).length;
    return n;
  };
  // The parts of a row, reused: an indexOf loop into one array costs about half of split() (bench ledger).
  const p: string[] = [];
  /** Splits `text` at U+0001 into `p`; returns how many parts (counting stops past `max`). */
  const splitRow = (text: string, max: number): number => {
    let k = 0;
    let i = 0;
    for (;;) {
      const j = text.indexOf('\u0001', i);
      if (j < 0 || k === max) {
        p[k++] = text.slice(i);
        return j < 0 ? k : k + 1;
      }
      p[k++] = text.slice(i, j);
      i = j + 1;
    }
  };
  /** The record of one row text; `parts` is how many it must split into. */
  const visitRow = (tenant: string, text: string, parts: number, prevOf: (p: string[]) => string | null, visit: (record: AuditRecord, text: string | undefined) => void, from: number): string => {
    if (splitRow(text, parts) === parts) {
      const r = record(tenant, p, prevOf(p));
      if (r.seq >= from) visit(r, text.slice(0, textsLength(p)));
      return r.hash;
    }
    // Only the free texts can hold U+0001; the seq leads, before any of them.
    const seq = Number(p[0]);
    const r = textRecord(tenant, columnsOf(tenant, seq), prevOf(p));
    if (seq >= from) visit(r, undefined);
    return r.hash;
  };
  return (tenant, fromSeq, toSeq, filter, visit) => {
    const to = Math.min(toSeq, MAX_SEQ);
    let n = 0;
    if (!hasRowFilter(filter)) {
      // One page at a time (the caller's range, ≤ a few thousand rows): all() is cheaper per row than iterate().
      const rows = statement('', `select ${SQLITE_STORED_ROW} ${SQLITE_CHAIN_RANGE} order by r.pos`, true).all(tenant, Math.max(1, fromSeq - 1), to) as string[];
      let prev: string | null = null;
      let prevSeq = fromSeq - 1;
      // A missing row in between: its successor's predecessor is unknown, served as zeros (verify reports the gap).
      const prevOf = (p: string[]): string | null => {
        const seq = Number(p[0]);
        const v = seq === prevSeq + 1 ? prev : null;
        prevSeq = seq;
        return v;
      };
      for (let i = 0; i < rows.length; i++) {
        prev = visitRow(tenant, rows[i] as string, STORED_PARTS, prevOf, visit, fromSeq);
        if (prevSeq >= fromSeq) n++;
      }
      return n;
    }
    const terms = filterTerms(filter);
    const params = terms.map(([, value]) => value);
    const key = terms.map(([lhs]) => `${lhs} ?`).join(' and ');
    // The predecessor's hash leads (fixed width, before any free text): hex, '' at seq 1 or after a gap.
    const rows = statement(key, `select lower(hex((select p.hash from audit_records p where p.pos = r.pos - 1))) || char(1) || ${SQLITE_STORED_ROW} ${SQLITE_CHAIN_RANGE} and ${key} order by r.pos`, true).all(tenant, fromSeq, to, ...params) as string[];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as string;
      const cut = row.indexOf('\u0001');
      visitRow(tenant, row.slice(cut + 1), STORED_PARTS, () => orNull(row.slice(0, cut)), visit, fromSeq);
      n++;
    }
    return n;
  };
}

/** The part of a read-only better-sqlite3 handle {@link sqliteStoredRowIterator} uses. */
export interface SqlitePluckHandle {
  prepare(source: string): { raw(on: boolean): { all(...params: unknown[]): unknown[] }; pluck(on: boolean): { all(...params: unknown[]): unknown[] } };
}
