/**
 * Tampering with the stored rows (issue 4 item 7), on both backends: the test edits `audit_records`
 * and `audit_heads` with direct SQL as the table owner, deliberately switching the append-only
 * triggers off, and the server-side verification (what `GET /v1/audit/verify` answers) must name
 * the right reason and the first bad seq.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { eventSigPreimage } from '../../src/ledger/preimage.js';
import { join } from 'node:path';
import { verifyStoredChain } from '../../src/ledger/chain-verifier.js';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import type { VerifyReport } from '../../src/ledger/verify.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite/sqlite-store.js';
import type { ExportSource } from '../../src/workers/export-protocol.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { draft, newSigner } from './fixtures.js';

const N = 40;

/** A distinct tenant id per case, so one store holds every case's chain. */
function tenantNo(i: number): string {
  return `01970c2e-4b1a-7c3d-8e4f-${i.toString(16).padStart(12, '0')}`;
}

for (const b of await testStores()) {
  describe(`${b.backend}: tampering with stored ledger rows`, { skip: b.skip }, () => {
    let ts: TestStore;
    let ledger: LedgerService;
    let caseNo = 0;

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      ledger = await LedgerService.open({ store: ts.store, dataDir: ts.config.dataDir, threads: 1, checkpointIntervalMs: 0, env: {} });
    });
    after(async () => {
      await ledger?.close();
      await ts?.dispose();
    });

    /**
     * The statements below are written against (tenant_id, seq), Postgres's key; SQLite keys a row
     * by `pos = chain << 40 | seq` (ledger-store.ts), so the same statement is rewritten onto it.
     */
    function sqliteKeys(text: string): string {
      return text
        .replace(/set seq = \?/, 'set pos = ((pos >> 40) << 40) | ?')
        .replace(/tenant_id = \?/g, '(pos >> 40) = (select chain from audit_heads where tenant_id = ?)')
        .replace(/\bseq\b/g, '(pos & 1099511627775)');
    }

    /** Owner SQL with the append-only triggers off (the attacker with database access). */
    async function tamper(statements: Array<[string, unknown[]]>): Promise<void> {
      const sqlite = ts.backend === 'sqlite';
      // The owner can switch triggers off: exactly the attacker the signatures and heads are for.
      if (sqlite) {
        await ts.admin.query('drop trigger audit_records_no_update');
        await ts.admin.query('drop trigger audit_records_no_delete');
      } else {
        await ts.admin.query('alter table audit_records disable trigger user');
      }
      try {
        for (const [text, params] of statements)
          await ts.admin.query(
            sqlite
              ? sqliteKeys(text)
              : text.replace(
                  /\?/g,
                  (() => {
                    let n = 0;
                    return () => `$${++n}`;
                  })(),
                ),
            params,
          );
      } finally {
        if (sqlite) {
          await ts.admin.query(
            `create trigger audit_records_no_update before update on audit_records begin select raise(abort, 'audit_records is ` +
              `append-only'); end`,
          );
          await ts.admin.query(
            `create trigger audit_records_no_delete before delete on audit_records begin select raise(abort, 'audit_records is ` +
              `append-only'); end`,
          );
        } else {
          await ts.admin.query('alter table audit_records enable trigger user');
        }
      }
    }

    /**
     * A fresh chain of N records with checkpoints at seq 20 and 35; every third record carries a
     * payload hash and every fifth non-ASCII text (the packed reader lays text out by bytes).
     */
    async function chain(): Promise<{ tenant: string; records: AuditRecord[] }> {
      const tenant = tenantNo(++caseNo);
      const extra = (i: number) => ({
        ...(i % 3 === 0 ? { payload_hash: Buffer.alloc(32, i).toString('hex') } : {}),
        ...(i % 5 === 0 ? { actor: `user:zoë-${i}-🙂`, target_id: `agent-${i}-ü` } : {}),
      });
      // Issued in one tick: the pipeline keeps call order, so record i lands at seq i.
      const records = await Promise.all(
        Array.from({ length: N }, (_, k) =>
          ledger.append(tenant, k + 1 === 20 || k + 1 === 35 ? checkpointDraft() : draft(k + 1, extra(k + 1))),
        ),
      );
      records.forEach((r, k) => assert.equal(r.seq, k + 1));
      return { tenant, records };
    }

    const blob = (hexText: string): Buffer => Buffer.from(hexText, 'hex');

    /**
     * What `GET /v1/audit/verify` answers, computed both ways the server can: ranges read on this
     * thread, and ranges of 8 read and verified by pool workers on their own connections. Both must agree.
     */
    async function verifyBoth(tenant: string, from = 1): Promise<VerifyReport> {
      const keys = ledger.keyring.keySet(tenant);
      const source: ExportSource =
        ts.backend === 'sqlite'
          ? { kind: 'sqlite', file: join(ts.config.dataDir, SQLITE_FILE_NAME) }
          : { kind: 'postgres', dsn: ts.config.dsn as string };
      const here = await verifyStoredChain(ts.store, tenant, { from, keys, pool: null, chunkSize: 16 });
      const workers = await verifyStoredChain(ts.store, tenant, { from, keys, pool: ledger.pool, source, chunkSize: 8 });
      assert.deepEqual(workers, here, 'worker ranges and main-thread reads give the same report');
      return here;
    }

    test('an untouched chain verifies, with its checkpoints and every signature', async () => {
      const { tenant } = await chain();
      const r = await verifyBoth(tenant);
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.deepEqual(r.chain, { ok: true, checked: N, break_at: null, reason: null });
      assert.equal(r.checkpoints.count, 2);
      assert.equal(r.checkpoints.latest_attested_seq, 34);
      assert.equal(r.signatures.checked, N);
    });

    test('a changed hashed field is hash-mismatch at that seq', async () => {
      const { tenant } = await chain();
      await tamper([['update audit_records set actor = ? where tenant_id = ? and seq = ?', ['user:mallory', tenant, 10]]]);
      const r = await verifyBoth(tenant);
      assert.equal(r.ok, false);
      assert.deepEqual([r.chain.reason, r.chain.break_at, r.chain.checked], ['hash-mismatch', 10, 9]);
    });

    test('a flipped byte in a stored hash, blind or meta is caught at that seq', async () => {
      // prev_hash and (until erasure) meta_commitment are not stored: they are derived on read,
      // so their integrity is that of the previous row's hash and of blind + meta.
      for (const col of ['hash', 'meta_blind', 'meta'] as const) {
        const { tenant, records } = await chain();
        const text = (records[14] as AuditRecord)[col] as string;
        const value = col === 'meta' ? text.replace('{', '{ ') : blob(text);
        if (Buffer.isBuffer(value)) value[7] = (value[7] as number) ^ 0x01;
        await tamper([[`update audit_records set ${col} = ? where tenant_id = ? and seq = ?`, [value, tenant, 15]]]);
        const r = await verifyBoth(tenant);
        assert.equal(r.chain.break_at, 15, col);
        assert.equal(r.chain.reason, 'hash-mismatch', col);
      }
    });

    test('a changed byte in any hashed column is hash-mismatch at that seq, and nothing before it is blamed', async () => {
      // Seq 15 has a payload hash and non-ASCII actor and target (see chain()).
      const flip = (text: string): string => text.slice(0, -1) + String.fromCharCode(text.charCodeAt(text.length - 1) ^ 0x01);
      const cases: Array<[string, (r: AuditRecord) => unknown]> = [
        ['occurred_at', (r) => r.occurred_at.replace(/\d(?=Z$)/, (d) => String((Number(d) + 1) % 10))],
        ['actor', (r) => flip(r.actor)],
        ['actor_kind', (r) => flip(r.actor_kind)],
        ['action', (r) => flip(r.action)],
        ['target_kind', (r) => flip(r.target_kind)],
        ['target_id', (r) => flip(r.target_id)],
        ['payload_hash', (r) => { const b = blob(r.payload_hash as string); b[31] = (b[31] as number) ^ 0x80; return b; }],
        ['payload_hash', () => null],
      ];
      for (const [col, value] of cases) {
        const { tenant, records } = await chain();
        const rec = records[14] as AuditRecord;
        assert.notEqual(rec.payload_hash, null);
        await tamper([[`update audit_records set ${col} = ? where tenant_id = ? and seq = ?`, [value(rec), tenant, 15]]]);
        const r = await verifyBoth(tenant);
        assert.deepEqual([r.chain.reason, r.chain.break_at, r.chain.checked], ['hash-mismatch', 15, 14], col);
      }
    });

    test('a checkpoint whose meta is edited is hash-mismatch at the checkpoint', async () => {
      const { tenant, records } = await chain();
      const meta = (records[34] as AuditRecord).meta as string;
      await tamper([
        [
          'update audit_records set meta = ? where tenant_id = ? and seq = ?',
          [meta.replace('"attested_seq":34', '"attested_seq":33'), tenant, 35],
        ],
      ]);
      const r = await verifyBoth(tenant);
      assert.deepEqual([r.chain.reason, r.chain.break_at, r.checkpoints.count], ['hash-mismatch', 35, 1]);
    });

    test('erased meta (blind and meta gone, commitment kept) still verifies; a changed kept commitment is hash-mismatch', async () => {
      const { tenant, records } = await chain();
      const rec = records[9] as AuditRecord;
      const erase = 'update audit_records set meta = null, meta_blind = null, meta_commitment = ? where tenant_id = ? and seq = ?';
      await tamper([[erase, [blob(rec.meta_commitment), tenant, 10]]]);
      const ok = await verifyBoth(tenant);
      assert.equal(ok.ok, true, JSON.stringify(ok));
      const bad = blob(rec.meta_commitment);
      bad[0] = (bad[0] as number) ^ 0x01;
      await tamper([[erase, [bad, tenant, 10]]]);
      const r = await verifyBoth(tenant);
      assert.deepEqual([r.chain.reason, r.chain.break_at], ['hash-mismatch', 10]);
    });

    test('a stored commitment beside a live blind, or a blind without meta, is refused by the schema', async () => {
      const { tenant } = await chain();
      await assert.rejects(
        tamper([['update audit_records set meta_commitment = ? where tenant_id = ? and seq = ?', [Buffer.alloc(32, 1), tenant, 5]]]),
      );
    });

    test('a deleted middle row is seq-gap at its seq', async () => {
      const { tenant } = await chain();
      await tamper([['delete from audit_records where tenant_id = ? and seq = ?', [tenant, 12]]]);
      const r = await verifyBoth(tenant);
      assert.deepEqual([r.ok, r.chain.reason, r.chain.break_at], [false, 'seq-gap', 12]);
    });

    test('a deleted run of rows spanning a whole verify range is seq-gap at its first seq', async () => {
      const { tenant } = await chain();
      await tamper([['delete from audit_records where tenant_id = ? and seq between ? and ?', [tenant, 9, 16]]]);
      const r = await verifyBoth(tenant);
      assert.deepEqual([r.ok, r.chain.reason, r.chain.break_at, r.chain.checked], [false, 'seq-gap', 9, 8]);
    });

    test('a deleted tail is tail-truncated, caught by the heads table', async () => {
      const { tenant } = await chain();
      await tamper([['delete from audit_records where tenant_id = ? and seq >= ?', [tenant, 38]]]);
      const r = await verifyBoth(tenant);
      assert.deepEqual([r.ok, r.chain.reason, r.chain.break_at, r.chain.checked], [false, 'tail-truncated', 38, 37]);
    });

    test('a head that names another record is hash-mismatch at the head', async () => {
      const { tenant } = await chain();
      // The owner switches the heads triggers off first (migration 19 refuses a head that names another hash).
      if (ts.backend === 'sqlite') {
        await ts.admin.query('drop trigger audit_heads_forward_update');
        await ts.admin.query('update audit_heads set hash = ? where tenant_id = ?', [Buffer.alloc(32, 9), tenant]);
      } else {
        await ts.admin.query('alter table audit_heads disable trigger user');
        await ts.admin.query('update audit_heads set hash = $1 where tenant_id = $2', [Buffer.alloc(32, 9), tenant]);
        await ts.admin.query('alter table audit_heads enable trigger user');
      }
      const r = await verifyBoth(tenant);
      assert.deepEqual([r.chain.reason, r.chain.break_at], ['hash-mismatch', N]);
    });

    test('two reordered rows break the chain at the first of them', async () => {
      const { tenant } = await chain();
      await tamper([
        ['update audit_records set seq = ? where tenant_id = ? and seq = ?', [1000, tenant, 10]],
        ['update audit_records set seq = ? where tenant_id = ? and seq = ?', [10, tenant, 11]],
        ['update audit_records set seq = ? where tenant_id = ? and seq = ?', [11, tenant, 1000]],
      ]);
      const r = await verifyBoth(tenant);
      assert.equal(r.ok, false);
      assert.equal(r.chain.break_at, 10);
      assert.ok(r.chain.reason === 'prev-mismatch' || r.chain.reason === 'hash-mismatch', String(r.chain.reason));
    });

    test('a signature replaced by another record’s is sig-invalid at that seq; the chain itself is intact', async () => {
      const { tenant, records } = await chain();
      await tamper([
        [
          'update audit_records set sig = ? where tenant_id = ? and seq = ?',
          [Buffer.from((records[12] as AuditRecord).sig, 'base64'), tenant, 12],
        ],
      ]);
      const r = await verifyBoth(tenant);
      assert.equal(r.ok, false);
      assert.equal(r.chain.ok, true);
      assert.deepEqual([r.signatures.reason, r.signatures.first_bad_seq, r.signatures.checked], ['sig-invalid', 12, 11]);
    });

    test('a record signed by a foreign key is unknown-key at that seq', async () => {
      const { tenant, records } = await chain();
      const mallory = newSigner();
      const rec = records[24] as AuditRecord;
      const sig = mallory.sign(eventSigPreimage(tenant, rec.seq, rec.hash));
      await tamper([
        ['update audit_records set sig = ?, key_id = ? where tenant_id = ? and seq = ?', [sig, blob(mallory.keyId), tenant, 25]],
      ]);
      const r = await verifyBoth(tenant);
      assert.equal(r.ok, false);
      assert.deepEqual([r.signatures.reason, r.signatures.first_bad_seq], ['unknown-key', 25]);
    });

    test('verify from a later seq anchors on the stored record before it', async () => {
      const { tenant } = await chain();
      const ok = await verifyBoth(tenant, 21);
      assert.equal(ok.ok, true, JSON.stringify(ok));
      assert.equal(ok.chain.checked, N - 20);
      await tamper([['update audit_records set target_id = ? where tenant_id = ? and seq = ?', ['x', tenant, 30]]]);
      const bad = await verifyBoth(tenant, 21);
      assert.deepEqual([bad.chain.reason, bad.chain.break_at], ['hash-mismatch', 30]);
      const none = await verifyBoth(tenantNo(999));
      assert.deepEqual([none.ok, none.chain.reason, none.chain.checked], [false, 'no-events', 0]);
    });
  });
}
