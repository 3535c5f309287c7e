/** The verification worker's read: a range of SQLite rows packed into one buffer. */
import { META_PREFIX } from './preimage.js';
import { MAX_SEQ, SEQ_SPAN } from './row-codec.js';

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
export function sqlitePackedRangeReader(
  db: SqlitePackedHandle,
  columns: 'chain' | 'full',
): (tenant: string, fromSeq: number, toSeq: number) => PackedRows {
  const len = (c: string) => `ifnull(octet_length(r.${c}), ${PACKED.NULL})`;
  const full = columns === 'full';
  const text = ['occurred_at', 'actor', 'actor_kind', 'action', 'target_kind', 'target_id'];
  const lengths = [
    ...['meta', 'meta_blind', 'meta_commitment', 'payload_hash', 'hash', ...(full ? ['key_id', 'sig'] : [])].map(len),
    ...text.map((c) => `octet_length(r.${c})`),
  ];
  const row =
    `unhex(printf('01${lengths.map(() => '%08x').join('')}%016x', ${lengths.join(', ')}, r.pos & ${SEQ_SPAN - 1}))` +
    ` || ${text.map((c) => `r.${c}`).join(' || ')}` +
    (` || x'${META_PREFIX.toString('hex')}' || ifnull(r.meta_blind, x'') || ifnull(r.meta, '') || ifnull(r.meta_commitment, x'') || ` +
      `ifnull(r.payload_hash, x'') || r.hash`) +
    (full ? ' || r.key_id || r.sig' : '');
  // `||` yields NULL when a NOT NULL column is NULL: such a row becomes flag 0 instead of vanishing.
  const stmt = db
    .prepare(
      `select count(*), cast(group_concat(x, '') as blob) from (select coalesce(${row}, unhex(printf('00%016x', r.pos & ` +
        `${SEQ_SPAN - 1}))) as x` +
        (` from audit_records r, (select chain * ${SEQ_SPAN} as base from audit_heads where tenant_id = ?) c where r.pos between ` +
          `c.base + ? and c.base + ? order by r.pos)`),
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
