/**
 * The ledger tables through Kysely (both backends): reads and the plain append. Every statement that
 * touches `audit_records` lives in this file or its siblings: row-codec.ts (rows ↔ records),
 * chain-head.ts (head checks), sqlite-append.ts (the SQLite append fast path), export-iterator.ts and
 * packed-reader.ts (the export and verification workers' reads).
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
import { sql } from 'kysely';
import type { AuditRecord } from './record.js';
import type { ChainTail } from './chain.js';
import { filterSql, hasRowFilter, type RecordFilter } from './record-filter.js';
import {
  INSERT_COLUMNS,
  MAX_SEQ,
  PG_COLUMNS,
  SEQ_BITS,
  SEQ_SPAN,
  SQLITE_SELECT,
  buf,
  chainRecords,
  isSqlite,
  pushRow,
  recordRow,
  rowRecord,
  type StoredRow,
  type Tx,
} from './row-codec.js';

/** Rows of one chain with seq in [fromSeq, toSeq], ascending; `withPrev` adds each row's predecessor hash. */
async function selectRows(
  tx: Tx,
  tenant: string,
  fromSeq: number,
  toSeq: number,
  filter: RecordFilter,
  limit: number | null,
  withPrev: boolean,
): Promise<StoredRow[]> {
  const conds = filterSql(filter);
  const limitSql = limit === null ? sql`` : sql` limit ${limit}`;
  if (isSqlite(tx)) {
    const base = sql`(select chain * ${SEQ_SPAN} from audit_heads where tenant_id = ${tenant})`;
    const prev = withPrev ? sql`, (select p.hash from audit_records p where p.pos = r.pos - 1) as prev_hash` : sql``;
    const where = [sql`r.pos between ${base} + ${fromSeq} and ${base} + ${Math.min(toSeq, MAX_SEQ)}`, ...conds];
    const q = sql<StoredRow>`select ${sql.raw(SQLITE_SELECT)}${prev} from audit_records r
      where ${sql.join(where, sql` and `)} order by r.pos${limitSql}`;
    return (await q.execute(tx)).rows;
  }
  const prev = withPrev
    ? sql`, (select p.hash from audit_records p where p.tenant_id = r.tenant_id and p.seq = r.seq - 1) as prev_hash`
    : sql``;
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
    const chain =
      known ??
      ((await sql<{ next: number }>`select coalesce(max(chain), 0) + 1 as next from audit_heads`.execute(tx)).rows[0]?.next as number);
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
      const res =
        await sql`update audit_heads set seq = ${last.seq}, hash = ${hash} where tenant_id = ${tenant} and seq = ${prev.seq}`.execute(tx);
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
    const res = await tx
      .updateTable('audit_heads')
      .set({ seq: last.seq, hash })
      .where('tenant_id', '=', tenant)
      .where('seq', '=', prev.seq)
      .executeTakeFirst();
    // The head moved under us: the batch was sealed on a stale tail. The caller re-reads under its lock, so this is a bug guard.
    if (Number(res.numUpdatedRows) !== 1) throw new Error(`audit head of ${tenant} is not at seq ${prev.seq}`);
  }
}

/** Records of one chain from `fromSeq` ascending, at most `limit`, optionally filtered. */
export async function readRecords(
  tx: Tx,
  tenant: string,
  fromSeq: number,
  limit: number,
  filter: RecordFilter = {},
): Promise<AuditRecord[]> {
  const toSeq = filter.toSeq ?? MAX_SEQ;
  if (!hasRowFilter(filter)) return readRange(tx, tenant, fromSeq, toSeq, limit);
  // Filtered rows are not contiguous: each brings its predecessor's hash along.
  const rows = await selectRows(tx, tenant, fromSeq, toSeq, filter, limit, true);
  return rows.map((r) => rowRecord(tenant, r, r.prev_hash ?? null));
}

/** Records with seq in [fromSeq, toSeq] ascending (at most `limit`), unfiltered. */
export async function readRange(
  tx: Tx,
  tenant: string,
  fromSeq: number,
  toSeq: number,
  limit: number | null = null,
): Promise<AuditRecord[]> {
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
