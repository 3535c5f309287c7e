/**
 * Writes a signed chain into a SQLite store as fast as the ledger's own parts allow: batches are
 * hashed and linked on this thread (`hashBatch`), signed by the ledger pool, and inserted with the
 * SQLite fast path (`sqliteInsertRecords`); batch n+1 is hashed and signed while batch n commits.
 * Used by the scenarios that need a large ledger to read (ledger-verify, export).
 */
import { applySignatures, hashBatch, type ChainTail } from '../ledger/chain.js';
import type { Keyring } from '../ledger/keyring.js';
import { sqliteInsertRecords } from '../ledger/sqlite-append.js';
import type { AuditDraft } from '../ledger/record.js';
import type { Store } from '../store/store.js';
import type { LedgerPool } from '../workers/pool.js';

const BATCH = 4096;

/**
 * Append `count` records made by `draftAt(seq)` to `tenant`'s chain after `start` (null: an empty chain); `progress` sees each committed
 * seq.
 */
export async function generateChain(
  store: Store,
  pool: LedgerPool,
  keyring: Keyring,
  tenant: string,
  count: number,
  draftAt: (seq: number) => AuditDraft,
  progress: (committedSeq: number) => void = () => {},
  start: ChainTail | null = null,
): Promise<void> {
  let tail: ChainTail | null = start;
  let pendingCommit: Promise<void> = Promise.resolve();
  const first = (start?.seq ?? 0) + 1;
  for (let seq = first; seq < first + count; seq += BATCH) {
    const n = Math.min(BATCH, first + count - seq);
    const hashed = hashBatch(tail, tenant, Array.from({ length: n }, (_, i) => draftAt(seq + i)), keyring.active);
    const prev = tail;
    tail = hashed.tail;
    const signed = pool.signBatch({ keyId: keyring.active.keyId, tenant, firstSeq: hashed.firstSeq, hashes: hashed.hashes });
    await pendingCommit;
    pendingCommit = signed.then(async (s) => {
      const records = applySignatures(hashed, {
        sigLength: s.sigLength,
        sigs: Buffer.from(s.sigs.buffer, s.sigs.byteOffset, s.sigs.byteLength),
      });
      await store.sqlite!.transaction((db) => sqliteInsertRecords(db, tenant, records, prev));
      progress(seq + n - 1);
    });
  }
  await pendingCommit;
}
