/**
 * The append pipeline's SQLite fast path: prepared statements on the raw connection inside
 * `Store.sqlite.transaction`, one multi-row INSERT per {@link MULTI} records.
 */
import type { SqliteHandle } from '../store/store-types.js';
import type { AuditRecord } from './record.js';
import type { ChainTail } from './chain.js';
import { ChainHeadError, headProblem } from './chain-head.js';
import { INSERT_COLUMNS, SEQ_BITS, pushRow } from './row-codec.js';

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

/** {@link readHead} on a raw SQLite connection inside `Store.sqlite.transaction`. */
export function sqliteReadHead(db: SqliteHandle, tenant: string): ChainTail | null {
  const row = prepared(db).head.get(tenant) as { seq: number; hash: Buffer } | undefined;
  return row === undefined ? null : { seq: Number(row.seq), hash: row.hash.toString('hex') };
}

/** {@link assertHeadConsistent} on a raw SQLite connection inside `Store.sqlite.transaction`. */
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

/** {@link insertRecords} on a raw SQLite connection inside `Store.sqlite.transaction`. */
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
  else if (s.updateHead.run(last.seq, hash, tenant, (prev as ChainTail).seq).changes !== 1)
    throw new Error(`audit head of ${tenant} is not at seq ${(prev as ChainTail).seq}`);
}
