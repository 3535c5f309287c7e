/**
 * Sealing a batch of drafts into chained, signed records (DECISIONS.md "Audit ledger").
 * The work is split in two on purpose:
 *  - {@link hashBatch} links and hashes in seq order. It is cheap (two SHA-256 per record) and must
 *    run where the chain tail is known, on the main thread inside the per-chain queue.
 *  - {@link signHashes} signs the batch's event preimages. It is the expensive part and needs only
 *    (tenant, first seq, hashes), so it can run in the worker pool; {@link applySignatures} puts the
 *    result back. {@link sealBatch} does both in-thread.
 */
import { randomFillSync } from 'node:crypto';
import type { AuditDraft, AuditRecord } from './record.js';
import { canonicalMeta } from './canonical-json.js';
import {
  ZERO_HASH,
  ZERO_HASH_HEX,
  checkpointSigPreimageView,
  eventSigPreimageView,
  isHex32,
  metaCommitment,
  recordHash,
} from './preimage.js';
import type { Signer } from './signers.js';
import { nowEpochNs, formatTimestamp, parseTimestamp } from './time.js';
import { uuid7 } from './uuid7.js';
import { CHECKPOINT_ACTION, type CheckpointMeta } from './checkpoint.js';

/** A chain's tip as kept in the heads table: last seq and its hex hash. */
export interface ChainTail {
  seq: number;
  hash: string;
}

/** Hooks that make sealing deterministic for golden vectors and tests; production leaves them unset. */
export interface SealOptions {
  /** Fill `out` (32 × batch size) with the meta blinds; default crypto-random. */
  fillBlinds?: (out: Buffer) => void;
  /** Id for a record; default a UUIDv7 from its occurred_at. */
  newId?: (epochMs: number, subMsNs: number) => string;
}

/** The output of {@link hashBatch}: records with `sig` still empty, and their raw hashes back to back. */
export interface HashedBatch {
  tenant: string;
  firstSeq: number;
  records: AuditRecord[];
  /** 32 × records.length bytes: the raw hash of each record, in order. */
  hashes: Buffer;
  /** The chain tail after this batch. */
  tail: ChainTail;
}

/** Signatures of a batch, back to back; every signature of one key has the same length. */
export interface BatchSignatures {
  sigLength: number;
  sigs: Buffer;
}

/** Throw a TypeError unless the draft is well-formed (strings, hex payload hash, canonical time). */
function checkDraft(d: AuditDraft, i: number): void {
  for (const k of ['actor', 'actor_kind', 'action', 'target_kind', 'target_id'] as const) {
    if (typeof d[k] !== 'string') throw new TypeError(`draft[${i}].${k} must be a string`);
  }
  if (d.actor === '' || d.action === '') throw new TypeError(`draft[${i}] needs an actor and an action`);
  if (d.payload_hash != null && !isHex32(d.payload_hash)) {
    throw new TypeError(`draft[${i}].payload_hash must be lowercase hex SHA-256`);
  }
}

/** Link and hash drafts after `tail` (null for an empty chain), in order, on the calling thread. */
export function hashBatch(
  tail: ChainTail | null,
  tenant: string,
  drafts: readonly AuditDraft[],
  signer: Signer,
  opts: SealOptions = {},
): HashedBatch {
  const n = drafts.length;
  const firstSeq = tail === null ? 1 : tail.seq + 1;
  if (tail !== null && !isHex32(tail.hash)) throw new TypeError('tail hash must be lowercase hex SHA-256');
  const blinds = Buffer.allocUnsafe(32 * n);
  (opts.fillBlinds ?? randomFillSync)(blinds);
  const hashes = Buffer.allocUnsafe(32 * n);
  const records: AuditRecord[] = new Array<AuditRecord>(n);
  let prev: Buffer = tail === null ? ZERO_HASH : Buffer.from(tail.hash, 'hex');
  let prevHex = tail === null ? ZERO_HASH_HEX : tail.hash;
  for (let i = 0; i < n; i++) {
    const d = drafts[i] as AuditDraft;
    checkDraft(d, i);
    const seq = firstSeq + i;
    let occurredAt: string;
    let ms: number;
    let subMsNs: number;
    if (d.occurred_at === undefined) {
      const ns = nowEpochNs();
      occurredAt = formatTimestamp(ns);
      ms = Number(ns / 1_000_000n);
      subMsNs = Number(ns % 1_000_000n);
    } else {
      occurredAt = d.occurred_at;
      ({ ms, subMsNs } = parseTimestamp(occurredAt));
    }
    const metaText = d.action === CHECKPOINT_ACTION ? checkpointMetaText(tenant, seq, prev, prevHex, signer) : canonicalMeta(d.meta ?? {});
    const blind = blinds.subarray(32 * i, 32 * i + 32);
    const commitment = metaCommitment(blind, metaText);
    const payloadHex = d.payload_hash ?? null;
    const fields = {
      tenant,
      seq,
      occurred_at: occurredAt,
      actor: d.actor,
      actor_kind: d.actor_kind,
      action: d.action,
      target_kind: d.target_kind,
      target_id: d.target_id,
    };
    const hash = recordHash(fields, commitment, payloadHex === null ? null : Buffer.from(payloadHex, 'hex'), prev);
    hash.copy(hashes, 32 * i);
    const hashHex = hash.toString('hex');
    records[i] = {
      id: (opts.newId ?? uuid7)(ms, subMsNs),
      ...fields,
      meta: metaText,
      meta_blind: blind.toString('hex'),
      meta_commitment: commitment.toString('hex'),
      payload_hash: payloadHex,
      prev_hash: prevHex,
      hash: hashHex,
      sig: '',
      key_id: signer.keyId,
    };
    prev = hash;
    prevHex = hashHex;
  }
  return { tenant, firstSeq, records, hashes, tail: { seq: firstSeq + n - 1, hash: prevHex } };
}

/**
 * Checkpoint meta for the record at `seq`: it attests its predecessor (seq - 1, whose hash is the
 * checkpoint's prev_hash) with a signature over the checkpoint preimage. The signature is computed
 * here, in order, because it is part of the meta and therefore of this record's hash.
 */
function checkpointMetaText(tenant: string, seq: number, prev: Buffer, prevHex: string, signer: Signer): string {
  if (seq < 2) throw new RangeError('a checkpoint needs at least one record before it');
  const view = checkpointSigPreimageView(tenant, seq - 1, prev) as Buffer;
  const meta: CheckpointMeta = {
    attested_seq: seq - 1,
    head_hash: prevHex,
    checkpoint_sig: signer.sign(view).toString('base64'),
    key_id: signer.keyId,
  };
  return canonicalMeta(meta);
}

/** Sign the event preimages of `hashes` (32 bytes each) for seqs firstSeq, firstSeq+1, …. */
export function signHashes(signer: Signer, tenant: string, firstSeq: number, hashes: Uint8Array): BatchSignatures {
  const n = hashes.length / 32;
  if (!Number.isInteger(n)) throw new RangeError('hashes must be a multiple of 32 bytes');
  let sigs: Buffer | null = null;
  let sigLength = 0;
  for (let i = 0; i < n; i++) {
    const view = eventSigPreimageView(tenant, firstSeq + i, hashes.subarray(32 * i, 32 * i + 32)) as Buffer;
    const sig = signer.sign(view);
    if (sigs === null) {
      sigLength = sig.length;
      sigs = Buffer.allocUnsafe(sigLength * n);
    } else if (sig.length !== sigLength) {
      throw new Error(`signature length changed within a batch (${sigLength} → ${sig.length})`);
    }
    sig.copy(sigs, sigLength * i);
  }
  return { sigLength, sigs: sigs ?? Buffer.alloc(0) };
}

/** Put signatures (from {@link signHashes}, here or in a worker) into the hashed records. */
export function applySignatures(batch: HashedBatch, result: BatchSignatures): AuditRecord[] {
  const { records } = batch;
  const { sigLength, sigs } = result;
  if (sigs.length !== sigLength * records.length) throw new RangeError('signature count does not match the batch');
  for (let i = 0; i < records.length; i++) {
    (records[i] as AuditRecord).sig = sigs.toString('base64', sigLength * i, sigLength * (i + 1));
  }
  return records;
}

/** Hash and sign a batch in-thread: fully formed records ready to commit with the new tail. */
export function sealBatch(
  tail: ChainTail | null,
  tenant: string,
  drafts: readonly AuditDraft[],
  signer: Signer,
  opts: SealOptions = {},
): AuditRecord[] {
  const batch = hashBatch(tail, tenant, drafts, signer, opts);
  return applySignatures(batch, signHashes(signer, tenant, batch.firstSeq, batch.hashes));
}
