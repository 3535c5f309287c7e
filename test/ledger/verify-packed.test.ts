/**
 * The SQLite verification worker's path (packed-reader.ts `sqlitePackedRangeReader` + verify-packed.ts)
 * against the record-level verifier (verify-chunk.ts) on the same stored chain: every range split
 * and every anchor case must give the same chunk report. Tampered rows are covered end to end by
 * tamper-store.test.ts, which runs both paths on every case.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sealBatch, type ChainTail } from '../../src/ledger/chain.js';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { sqlitePackedRangeReader, type PackedRows, type SqlitePackedHandle } from '../../src/ledger/packed-reader.js';
import { sqliteInsertRecords } from '../../src/ledger/sqlite-append.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { verifyChunk } from '../../src/ledger/verify-chunk.js';
import { verifyPackedChunk } from '../../src/ledger/verify-packed.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite/sqlite-store.js';
import { createSqliteTestStore, type TestStore } from '../helpers/stores.js';
import { TENANT, draft, headOf, newSigner, trust } from './fixtures.js';

const signer = newSigner();
const keys = trust(signer);
const N = 90;

function drafts(from: number, to: number): AuditDraft[] {
  const out: AuditDraft[] = [];
  for (let i = from; i <= to; i++) {
    if (i % 25 === 0) out.push(checkpointDraft());
    else
      out.push(
        draft(i, {
          ...(i % 3 === 0 ? { payload_hash: Buffer.alloc(32, i).toString('hex') } : {}),
          ...(i % 4 === 0 ? { actor: `user:zoë-${i}-🙂`, target_id: '' } : {}),
          ...(i % 7 === 0 ? { meta: { note: 'x'.repeat(300 + i), nested: { ü: [i] } } } : {}),
        }),
      );
  }
  return out;
}

let ts: TestStore;
let db: BetterSqlite3.Database;
const records: AuditRecord[] = [];

before(async () => {
  ts = await createSqliteTestStore();
  await ts.store.migrate();
  let tail: ChainTail | null = null;
  for (let from = 1; from <= N; from += 30) {
    const batch = sealBatch(tail, TENANT, drafts(from, from + 29), signer);
    const prev = tail;
    await ts.store.sqlite!.transaction((h) => sqliteInsertRecords(h, TENANT, batch, prev));
    records.push(...batch);
    tail = headOf(batch);
  }
  db = new BetterSqlite3(join(ts.config.dataDir, SQLITE_FILE_NAME), { readonly: true });
});
after(async () => {
  db?.close();
  await ts?.dispose();
});

test('packed ranges verify exactly as the records do, for every split, anchor and column set', () => {
  const head = headOf(records);
  for (const columns of ['chain', 'full'] as const) {
    const read = sqlitePackedRangeReader(db, columns);
    for (const size of [1, 7, 25, N]) {
      for (let a = 1; a <= N; a += size) {
        const b = Math.min(N, a + size - 1);
        const lo = Math.max(1, a - 1);
        const packed = read(TENANT, lo, b);
        assert.equal(packed.count, b - lo + 1);
        const signatures = columns === 'full';
        const got = verifyPackedChunk(packed, { tenant: TENANT, firstSeq: a, withAnchor: lo < a, keys, signatures, columns, head });
        const anchor = a > 1 ? { seq: a - 1, hash: (records[a - 2] as AuditRecord).hash } : null;
        const want = verifyChunk(records.slice(a - 1, b), { tenant: TENANT, firstSeq: a, anchor, keys, signatures, head });
        assert.deepEqual(got, want, `${columns} [${a}, ${b}]`);
        assert.equal(got.chain.reason, null);
      }
    }
  }
});

test('without its anchor a range checks from its second record, and another tenant’s range is empty', () => {
  const read = sqlitePackedRangeReader(db, 'chain');
  const got = verifyPackedChunk(read(TENANT, 40, 60), {
    tenant: TENANT,
    firstSeq: 40,
    withAnchor: false,
    keys,
    signatures: false,
    columns: 'chain',
    head: null,
  });
  const want = verifyChunk(records.slice(39, 60), { tenant: TENANT, firstSeq: 40, anchor: null, keys, signatures: false, head: null });
  assert.deepEqual(got, want);
  const none = read('01970c2e-4b1a-7c3d-8e4f-00000000dead', 1, N);
  assert.deepEqual([none.count, none.bytes.length], [0, 0]);
});

test('a range too big for one SQLite value is read in halves, in order', () => {
  const real = db.prepare.bind(db);
  let calls = 0;
  // A handle whose statement refuses ranges of more than 8 rows, as SQLite does past its length limit.
  const handle: SqlitePackedHandle = {
    prepare(source) {
      const stmt = real(source).raw(true);
      return {
        raw: () => ({
          get: (...params: unknown[]) => {
            calls++;
            if ((params[2] as number) - (params[1] as number) >= 8)
              throw Object.assign(new Error('string or blob too big'), { code: 'SQLITE_TOOBIG' });
            return stmt.get(...params);
          },
        }),
      };
    },
  };
  const split: PackedRows = sqlitePackedRangeReader(handle, 'full')(TENANT, 1, N);
  const whole = sqlitePackedRangeReader(db, 'full')(TENANT, 1, N);
  assert.ok(calls > 10);
  assert.equal(split.count, N);
  assert.ok(split.bytes.equals(whole.bytes));
});

test('a NULL in a NOT NULL column (only with the schema rewritten) is hash-mismatch at its seq, not a vanished row', () => {
  // A copy of the tables without their constraints, as an attacker who rewrote the schema has them.
  const mem = new BetterSqlite3(':memory:');
  try {
    mem.prepare('attach database ? as src').run(join(ts.config.dataDir, SQLITE_FILE_NAME));
    mem.exec('create table audit_heads as select * from src.audit_heads; create table audit_records as select * from src.audit_records');
    const read = sqlitePackedRangeReader(mem, 'full');
    const ctx = { tenant: TENANT, firstSeq: 1, withAnchor: false, keys, signatures: true, columns: 'full' as const, head: headOf(records) };
    assert.equal(verifyPackedChunk(read(TENANT, 1, N), ctx).chain.reason, null);
    for (const col of ['actor', 'hash', 'occurred_at']) {
      mem.prepare(`update audit_records set ${col} = null where (pos & 1099511627775) = 12`).run();
      const r = verifyPackedChunk(read(TENANT, 1, N), ctx);
      assert.deepEqual([r.count, r.chain.reason, r.chain.break_at, r.chain.checked], [N, 'hash-mismatch', 12, 11], col);
      assert.deepEqual([r.signatures.reason, r.signatures.first_bad_seq], ['sig-invalid', 12], col);
      mem.exec('delete from audit_records; insert into audit_records select * from src.audit_records');
    }
  } finally {
    mem.close();
  }
});
