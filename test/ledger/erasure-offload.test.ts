/**
 * The offloaded SQLite erasure (src/ledger/erasure-scan.ts, what the export thread runs): windows
 * scanned on a read-only connection of their own with the commitments computed there, only the
 * UPDATEs on the store's writer; then the checkpoint (PASSIVE until backfilled, TRUNCATE) on a
 * connection of its own empties the WAL, and the erased string is in no file. The task handler runs
 * in this thread here (the server runs it on the export pool, erasure-worker.ts); it is the same code.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sealBatch, type ChainTail } from '../../src/ledger/chain.js';
import { verifyStoredChain } from '../../src/ledger/chain-verifier.js';
import { eraseLedgerMeta, type ErasureOffload } from '../../src/ledger/erasure.js';
import { runErasureTask } from '../../src/ledger/erasure-scan.js';
import { insertRecords, readRecords } from '../../src/ledger/ledger-store.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { newSigner, TENANT, trust } from './fixtures.js';

const N = 12_000;
const EMAIL = 'carol.offload-erasure@example.test';

for (const b of (await testStores()).filter((s) => s.backend === 'sqlite')) {
  describe('sqlite: ledger erasure with the scan and checkpoint offloaded', { skip: b.skip }, () => {
    let ts: TestStore;
    const signer = newSigner();
    const sealed: AuditRecord[] = [];
    let subject = 0;

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      let tail: ChainTail | null = null;
      for (let seq = 1; seq <= N; seq += 1000) {
        const drafts: AuditDraft[] = [];
        for (let s = seq; s < seq + 1000; s++) {
          if (s % 97 === 5) subject++;
          drafts.push({
            actor: 'user:u1',
            actor_kind: 'user',
            action: 'ticket.update',
            target_kind: 'ticket',
            target_id: `t-${s}`,
            meta: s % 97 === 5 ? { requester: EMAIL, s } : { s },
          });
        }
        const recs = sealBatch(tail, TENANT, drafts, signer);
        const prev: ChainTail | null = tail;
        await ts.store.withTenant(TENANT, (tx) => insertRecords(tx, TENANT, recs, prev));
        sealed.push(...recs);
        const last = recs[recs.length - 1] as AuditRecord;
        tail = { seq: last.seq, hash: last.hash };
      }
    });
    after(async () => {
      await ts?.dispose();
    });

    it(
      'erases exactly the matched records across windows, the chain verifies, and after the checkpoint the WAL is empty and the string ' +
        'is in no file',
      async () => {
        const file = ts.store.sqlite?.files.dbFile;
        assert.ok(file !== undefined, 'the SQLite store names its file');
        const scans: number[] = [];
        const offload: ErasureOffload = {
          file,
          run: async (task) => {
            if (task.kind === 'erasure-scan') scans.push(task.hi - task.lo + 1);
            return runErasureTask(task);
          },
        };
        const r = await eraseLedgerMeta(ts.store, TENANT, { actors: [], targets: [], strings: [EMAIL] }, undefined, offload);
        assert.equal(r.erased, subject);
        assert.equal(r.scanned, N);
        assert.ok(scans.length >= 3, `several windows scanned off the writer (${scans.length})`);
        const rec = await ts.store.withTenant(TENANT, async (tx) => (await readRecords(tx, TENANT, 5, 1))[0] as AuditRecord);
        assert.equal(rec.meta, null);
        assert.equal(rec.meta_blind, null);
        assert.equal(rec.meta_commitment, sealed[4]!.meta_commitment, 'the commitment computed on the scan connection is the sealed one');
        const report = await verifyStoredChain(ts.store, TENANT, { keys: trust(signer), pool: null });
        assert.equal(report.ok, true, JSON.stringify(report));
        assert.equal(
          (await eraseLedgerMeta(ts.store, TENANT, { actors: [], targets: [], strings: [EMAIL] }, undefined, offload)).erased,
          0,
          'idempotent',
        );

        const cp = await runErasureTask({ kind: 'erasure-checkpoint', file });
        assert.deepEqual(cp, { kind: 'erasure-checkpoint', busy: false, wal_frames: 0 });
        assert.equal(statSync(`${file}-wal`).size, 0, 'the WAL is truncated');
        const needle = Buffer.from(EMAIL);
        for (const name of readdirSync(dirname(file))) {
          const p = join(dirname(file), name);
          if (statSync(p).isFile()) assert.equal(readFileSync(p).indexOf(needle), -1, `${name} holds the erased string`);
        }
      },
    );
  });
}
