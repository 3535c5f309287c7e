/** Shared test fixtures for the ledger: keys, drafts and sealed chains built with the real code. */
import { sealBatch, type ChainTail } from '../../src/ledger/chain.js';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { keySet, type KeySet } from '../../src/ledger/keyset.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { createSigner, createVerifier, generateKey, type SignatureAlgorithm, type Signer } from '../../src/ledger/signers.js';

export const TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';
export const OTHER_TENANT = '01970c2e-4b1a-7c3d-8e4f-000000000002';

/** A fresh signer of `alg`. */
export function newSigner(alg: SignatureAlgorithm = 'ed25519'): Signer {
  return createSigner(alg, generateKey(alg, 2048).privateKey);
}

/** A key set trusting the given signers without seq bounds. */
export function trust(...signers: Signer[]): KeySet {
  return keySet(signers.map((s) => createVerifier(s.algorithm, s.publicKey)));
}

/** An ordinary draft number i. */
export function draft(i: number, extra: Partial<AuditDraft> = {}): AuditDraft {
  return {
    actor: `user:u${i % 7}`,
    actor_kind: 'user',
    action: i % 3 === 0 ? 'agent.update' : 'agent.create',
    target_kind: 'agent',
    target_id: `agent-${i}`,
    meta: { i, name: `agent ${i}`, tags: ['a', 'b'] },
    ...extra,
  };
}

/** Seal `count` records in batches of `batch`, with a checkpoint after every `checkpointEvery` records (0: none). */
export function buildChain(
  signer: Signer,
  count: number,
  opts: { batch?: number; checkpointEvery?: number; tenant?: string; tail?: ChainTail | null } = {},
): AuditRecord[] {
  const tenant = opts.tenant ?? TENANT;
  const batch = opts.batch ?? 50;
  const out: AuditRecord[] = [];
  let tail: ChainTail | null = opts.tail ?? null;
  let pending: AuditDraft[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const recs = sealBatch(tail, tenant, pending, signer);
    out.push(...recs);
    const last = recs[recs.length - 1] as AuditRecord;
    tail = { seq: last.seq, hash: last.hash };
    pending = [];
  };
  for (let i = 0; out.length + pending.length < count; i++) {
    const seqNext = (tail?.seq ?? 0) + pending.length + 1;
    const cp = opts.checkpointEvery && seqNext > 1 && seqNext % opts.checkpointEvery === 0;
    pending.push(cp ? checkpointDraft() : draft(i));
    if (pending.length >= batch) flush();
  }
  flush();
  return out;
}

/** The stored head of a chain. */
export function headOf(records: readonly AuditRecord[]): ChainTail {
  const last = records[records.length - 1] as AuditRecord;
  return { seq: last.seq, hash: last.hash };
}
