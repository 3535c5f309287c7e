/**
 * Verification of one contiguous chunk of a chain. Chunks are independent given their anchor (the
 * stored seq/hash of the record just before the chunk, which the caller reads from the previous
 * chunk), so a long chain is verified by running chunks in parallel (worker pool) and merging the
 * reports in order ({@link mergeChunks} in verify.ts). Per record, checks run in this order and the
 * first failure of a chunk wins: seq continuity (`seq-gap`), link to the previous stored hash
 * (`prev-mismatch`), recomputed meta commitment and record hash (`hash-mismatch`). Every number
 * reported is a position seq (anchor seq + index), which stays meaningful when a seq field is forged.
 */
import type { AuditRecord } from './record.js';
import { CHECKPOINT_ACTION, parseCheckpointMeta } from './checkpoint.js';
import { keyFor, type KeySet } from './keyset.js';
import {
  ZERO_HASH_HEX,
  checkpointSigPreimageView,
  eventSigPreimageView,
  metaCommitmentFromHex,
  recordHashFromHex,
} from './preimage.js';

export type ChainReason = 'hash-mismatch' | 'prev-mismatch' | 'seq-gap' | 'tail-truncated' | 'no-events';
export type CheckpointReason = 'no-checkpoints' | 'checkpoint-sig-invalid' | 'checkpoint-link-mismatch' | 'unknown-key';
export type SignatureReason = 'sig-invalid' | 'unknown-key' | 'key-out-of-range';

/**
 * A run of consecutive records signed by one key: [key_id, first seq, last seq] (position seqs).
 * A key signs one run per chain: rotation retires it for good and a key is never used again, so a
 * key that signs again after another key took over is outside its range (`key-out-of-range`),
 * whatever ranges the verifier was given (issue 30 item 2). The merge checks it across chunks.
 */
export type KeyRun = [keyId: string, first: number, last: number];

/** The stored seq and hex hash of the record before a chunk. */
export interface ChainAnchor {
  seq: number;
  hash: string;
}

/** What a chunk needs besides its records. */
export interface ChunkContext {
  /** The chain's tenant; hashes and signatures are recomputed with it, so a record of another chain fails. */
  tenant: string;
  /** Seq the first record must have. */
  firstSeq: number;
  /** The record before the chunk; null at seq 1 (prev must be zeros) or when verifying a suffix without it (link unchecked). */
  anchor: ChainAnchor | null;
  /** Trusted keys; checkpoints always need them, event signatures only when `signatures` is true. */
  keys: KeySet;
  /** Verify every record's event signature (the expensive part). */
  signatures: boolean;
  /** Expected head from the heads table: when its seq falls in the chunk, that record's hash must equal it. */
  head?: ChainAnchor | null;
  /**
   * Records read back from an export, which carries meta but not its blind: the meta commitment is
   * taken as recorded (it is in the hash) and meta is not checked against it. Checkpoint meta is
   * still read, and its own signature still checked.
   */
  metaUnbound?: boolean;
}

/** A checkpoint whose attested record lies before the chunk and its anchor; the merger resolves it. */
export interface DeferredLink {
  seq: number;
  attested_seq: number;
  head_hash: string;
}

/** The result of one chunk. */
export interface ChunkReport {
  firstSeq: number;
  count: number;
  chain: { checked: number; break_at: number | null; reason: ChainReason | null };
  checkpoints: {
    count: number;
    latest_attested_seq: number | null;
    first_bad_seq: number | null;
    reason: CheckpointReason | null;
    deferred: DeferredLink[];
  };
  signatures: { checked: number; first_bad_seq: number | null; reason: SignatureReason | null; runs?: KeyRun[] };
  /** Stored seq/hash of the last record, the next chunk's anchor. */
  last: ChainAnchor | null;
}

/**
 * True when `text` is the canonical base64 of some bytes (Buffer.from ignores stray characters, so a tampered sig could otherwise decode
 * unchanged).
 */
export function decodeCanonicalBase64(text: string): Buffer | null {
  const b = Buffer.from(text, 'base64');
  return b.toString('base64') === text ? b : null;
}

/** Verify one chunk: chain links and hashes, checkpoints, and (optionally) event signatures. */
export function verifyChunk(records: readonly AuditRecord[], ctx: ChunkContext): ChunkReport {
  const { tenant, firstSeq, anchor, keys } = ctx;
  const n = records.length;
  let breakAt: number | null = null;
  let reason: ChainReason | null = null;
  let prevHex: string | null = firstSeq === 1 ? ZERO_HASH_HEX : (anchor?.hash ?? null);
  const head = ctx.head ?? null;
  let i = 0;
  for (; i < n; i++) {
    const r = records[i] as AuditRecord;
    const seq = firstSeq + i;
    if (r.seq !== seq) {
      reason = 'seq-gap';
      break;
    }
    if (prevHex !== null && r.prev_hash !== prevHex) {
      reason = 'prev-mismatch';
      break;
    }
    if (!recordIntact(r, tenant, ctx.metaUnbound === true) || (head !== null && head.seq === seq && head.hash !== r.hash)) {
      reason = 'hash-mismatch';
      break;
    }
    prevHex = r.hash;
  }
  if (reason !== null) breakAt = firstSeq + i;
  const verified = i; // records [0, i) form an intact chain

  // Checkpoints inside the intact prefix.
  let cpCount = 0;
  let latest: number | null = null;
  let cpBad: number | null = null;
  let cpReason: CheckpointReason | null = null;
  const deferred: DeferredLink[] = [];
  for (let j = 0; j < verified && cpBad === null; j++) {
    const r = records[j] as AuditRecord;
    if (r.action !== CHECKPOINT_ACTION) continue;
    cpCount++;
    const seq = firstSeq + j;
    const why = checkCheckpoint(r.meta, seq, (idx) => (records[idx] as AuditRecord).hash, ctx, deferred);
    if (typeof why === 'string') {
      cpBad = seq;
      cpReason = why;
    } else if (latest === null || why.attested > latest) {
      latest = why.attested;
    }
  }

  const signatures = ctx.signatures
    ? signatureScan(n, firstSeq, (j) => checkEventSig(records[j] as AuditRecord, tenant, keys), (j) => (records[j] as AuditRecord).key_id)
    : NO_SIGNATURES;
  const lastRec = n > 0 ? (records[n - 1] as AuditRecord) : null;
  return {
    firstSeq,
    count: n,
    chain: { checked: verified, break_at: breakAt, reason },
    checkpoints: { count: cpCount, latest_attested_seq: latest, first_bad_seq: cpBad, reason: cpReason, deferred },
    signatures,
    last: lastRec === null ? null : { seq: lastRec.seq, hash: lastRec.hash },
  };
}

/** The signatures part of a report when they were not asked for. */
export const NO_SIGNATURES: ChunkReport['signatures'] = Object.freeze({ checked: 0, first_bad_seq: null, reason: null });

/**
 * Check signatures 0..n-1 in order; the first failure stops the scan (its seq is firstSeq + index).
 * `keyAt(j)` (the key id of record j, read right after its check) gives the chunk's {@link KeyRun}s,
 * up to the first failure; a key that signs again after another key took over within the chunk
 * stops the scan there as `key-out-of-range`.
 */
export function signatureScan(
  n: number,
  firstSeq: number,
  check: (index: number) => SignatureReason | null,
  keyAt?: (index: number) => string,
): ChunkReport['signatures'] {
  const runs: KeyRun[] = [];
  let run: KeyRun | undefined;
  const done = (checked: number, bad: number | null, reason: SignatureReason | null): ChunkReport['signatures'] =>
    keyAt === undefined ? { checked, first_bad_seq: bad, reason } : { checked, first_bad_seq: bad, reason, runs };
  for (let j = 0; j < n; j++) {
    const why = check(j);
    if (why !== null) return done(j, firstSeq + j, why);
    if (keyAt !== undefined) {
      const key = keyAt(j);
      if (run !== undefined && run[0] === key) {
        run[2] = firstSeq + j;
      } else {
        if (runs.some((r) => r[0] === key)) return done(j, firstSeq + j, 'key-out-of-range');
        run = [key, firstSeq + j, firstSeq + j];
        runs.push(run);
      }
    }
  }
  return done(n, null, null);
}

const STRING_FIELDS = [
  'id',
  'tenant',
  'occurred_at',
  'actor',
  'actor_kind',
  'action',
  'target_kind',
  'target_id',
  'meta_commitment',
  'prev_hash',
  'hash',
  'sig',
  'key_id',
] as const;

/** Records may come from an untrusted export file: wrong types must fail verification, never throw. */
function wellFormed(r: AuditRecord): boolean {
  for (const k of STRING_FIELDS) if (typeof r[k] !== 'string') return false;
  for (const k of ['meta', 'meta_blind', 'payload_hash'] as const) if (r[k] !== null && typeof r[k] !== 'string') return false;
  return true;
}

/** Recompute the meta commitment (unless erased) and the record hash, with the chain's tenant. */
function recordIntact(r: AuditRecord, tenant: string, metaUnbound: boolean): boolean {
  // The hash is recomputed with the chain's tenant, so the stored tenant field must be checked on its own.
  if (!wellFormed(r) || r.tenant !== tenant) return false;
  if ((r.meta !== null || r.meta_blind !== null) && !(metaUnbound && r.meta_blind === null)) {
    // Erasure destroys both together; one without the other is tampering.
    if (r.meta === null || r.meta_blind === null) return false;
    if (metaCommitmentFromHex(r.meta_blind, r.meta) !== r.meta_commitment) return false;
  }
  const h = recordHashFromHex(
    {
      tenant,
      seq: r.seq,
      occurred_at: r.occurred_at,
      actor: r.actor,
      actor_kind: r.actor_kind,
      action: r.action,
      target_kind: r.target_kind,
      target_id: r.target_id,
    },
    r.meta_commitment,
    r.payload_hash,
    r.prev_hash,
  );
  return h !== null && h === r.hash;
}

/**
 * Check the checkpoint record at `seq` (its meta text) against the chunk: `hashAt(idx)` is the hex
 * hash of the chunk's record at index idx. Returns the failure, or the attested seq when it holds;
 * a link to a record before the chunk and its anchor is deferred to the merge.
 */
export function checkCheckpoint(
  meta: string | null,
  seq: number,
  hashAt: (idx: number) => string,
  ctx: Pick<ChunkContext, 'tenant' | 'firstSeq' | 'keys' | 'anchor'>,
  deferred: DeferredLink[],
): CheckpointReason | { attested: number } {
  const m = parseCheckpointMeta(meta);
  if (m === null || m.attested_seq >= seq) return 'checkpoint-link-mismatch';
  const k = keyFor(ctx.keys, m.key_id, seq);
  if (k === 'unknown') return 'unknown-key';
  const sig = decodeCanonicalBase64(m.checkpoint_sig);
  const view = checkpointSigPreimageView(ctx.tenant, m.attested_seq, m.head_hash);
  if (k === 'out-of-range' || sig === null || view === null || !k.verify(view, sig)) return 'checkpoint-sig-invalid';
  const idx = m.attested_seq - ctx.firstSeq;
  if (idx >= 0) {
    if (hashAt(idx) !== m.head_hash) return 'checkpoint-link-mismatch';
  } else if (ctx.anchor !== null && m.attested_seq === ctx.anchor.seq) {
    if (ctx.anchor.hash !== m.head_hash) return 'checkpoint-link-mismatch';
  } else {
    deferred.push({ seq, attested_seq: m.attested_seq, head_hash: m.head_hash });
  }
  return { attested: m.attested_seq };
}

function checkEventSig(r: AuditRecord, tenant: string, keys: KeySet): SignatureReason | null {
  if (typeof r.sig !== 'string' || typeof r.key_id !== 'string' || typeof r.hash !== 'string') return 'sig-invalid';
  if (!Number.isSafeInteger(r.seq) || r.seq < 0) return 'sig-invalid';
  const k = keyFor(keys, r.key_id, r.seq);
  if (k === 'unknown') return 'unknown-key';
  // A retired key used outside its published range: whoever still holds the old key (a server that
  // went on with it after a rotation, or a thief) cannot append.
  if (k === 'out-of-range') return 'key-out-of-range';
  const sig = decodeCanonicalBase64(r.sig);
  const view = eventSigPreimageView(tenant, r.seq, r.hash);
  if (sig === null || view === null || !k.verify(view, sig)) return 'sig-invalid';
  return null;
}
