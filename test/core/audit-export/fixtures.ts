/** Shared fixtures of the audit export tests: a real store filled with records sealed by the ledger core. */
import { createHash } from 'node:crypto';
import { sealBatch, type ChainTail } from '../../../src/ledger/chain.js';
import { insertRecords, readHead } from '../../../src/ledger/ledger-store.js';
import type { AuditRecord } from '../../../src/ledger/record.js';
import type { Signer } from '../../../src/ledger/signers.js';
import type { Store } from '../../../src/store/store.js';
import { draft, newSigner } from '../../ledger/fixtures.js';

export { TENANT, OTHER_TENANT } from '../../ledger/fixtures.js';

const signer: Signer = newSigner('ed25519');

/**
 * Seals `count` more records on `tenant`'s chain (after its head) and inserts them, 2,000 per
 * transaction. Every 5th record vouches for a payload (payload_hash set), the rest carry none.
 */
export async function fillLedger(store: Store, tenant: string, count: number): Promise<AuditRecord[]> {
  let tail: ChainTail | null = await store.withTenant(tenant, (tx) => readHead(tx, tenant));
  const out: AuditRecord[] = [];
  while (out.length < count) {
    const n = Math.min(2000, count - out.length);
    const base = (tail?.seq ?? 0) + 1;
    const drafts = Array.from({ length: n }, (_, k) => {
      const i = base + k;
      return draft(i, i % 5 === 0 ? { payload_hash: createHash('sha256').update(`payload ${i}`).digest('hex') } : {});
    });
    const recs = sealBatch(tail, tenant, drafts, signer);
    const prev = tail;
    await store.withTenant(tenant, (tx) => insertRecords(tx, tenant, recs, prev));
    const last = recs[recs.length - 1] as AuditRecord;
    tail = { seq: last.seq, hash: last.hash };
    out.push(...recs);
  }
  return out;
}
