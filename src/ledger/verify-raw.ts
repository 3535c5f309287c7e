/**
 * {@link verifyChunk} over raw stored rows (ledger-store.ts `sqliteRawRangeReader`): the worker's
 * path for a stored SQLite chain. Same checks, same order, same report, but hashes, blinds and
 * signatures stay bytes end to end: no hex or base64 text is made per record and none is parsed back
 * (on a million-record chain that text round trip cost more than the hashing). `prev_hash` is not
 * stored, so the link is the previous row's stored hash fed into the recomputed hash: a deleted row
 * is `seq-gap`, any changed field, blind or meta is `hash-mismatch` of its record.
 */
import { CHECKPOINT_ACTION } from './checkpoint.js';
import { keyFor, type KeySet } from './keyset.js';
import { RAW, type RawRow } from './ledger-store.js';
import { ZERO_HASH, eventSigPreimageView, metaCommitment, recordHash } from './preimage.js';
import { NO_SIGNATURES, checkCheckpoint, signatureScan, type ChainAnchor, type ChainReason, type CheckpointReason, type ChunkReport, type DeferredLink, type SignatureReason } from './verify-chunk.js';

/** What {@link verifyRawChunk} needs besides its rows. */
export interface RawChunkContext {
  tenant: string;
  /** Seq the first row must have. */
  firstSeq: number;
  /** The stored row before the chunk; null at seq 1 (prev is zeros) or when that row is missing. */
  anchor: ChainAnchor | null;
  keys: KeySet;
  signatures: boolean;
  head: ChainAnchor | null;
}

/** Verify one chunk of raw rows; rows must carry `key_id` and `sig` when `signatures` is set. */
export function verifyRawChunk(rows: readonly RawRow[], ctx: RawChunkContext): ChunkReport {
  const { tenant, firstSeq, anchor, head } = ctx;
  const n = rows.length;
  let reason: ChainReason | null = null;
  // Without the stored record before the chunk the first hash cannot be recomputed; the gap
  // before it is reported where the rows stop (previous chunk, or the merge).
  let prev: Buffer | null = firstSeq === 1 ? ZERO_HASH : anchor === null ? null : Buffer.from(anchor.hash, 'hex');
  const headHash = head === null ? null : Buffer.from(head.hash, 'hex');
  let i = 0;
  for (; i < n; i++) {
    const r = rows[i] as RawRow;
    const seq = firstSeq + i;
    if (r[RAW.seq] !== seq) {
      reason = 'seq-gap';
      break;
    }
    const stored = r[RAW.hash];
    if (prev !== null || i > 0) {
      const computed = rowHash(r, tenant, seq, prev);
      if (computed === null || !computed.equals(stored) || (head !== null && head.seq === seq && !stored.equals(headHash as Buffer))) {
        reason = 'hash-mismatch';
        break;
      }
    }
    prev = stored;
  }
  const breakAt = reason === null ? null : firstSeq + i;
  const verified = i;

  let cpCount = 0;
  let latest: number | null = null;
  let cpBad: number | null = null;
  let cpReason: CheckpointReason | null = null;
  const deferred: DeferredLink[] = [];
  const hashAt = (idx: number): string => (rows[idx] as RawRow)[RAW.hash].toString('hex');
  for (let j = 0; j < verified && cpBad === null; j++) {
    const r = rows[j] as RawRow;
    if (r[RAW.action] !== CHECKPOINT_ACTION) continue;
    cpCount++;
    const why = checkCheckpoint(r[RAW.meta], firstSeq + j, hashAt, { tenant, firstSeq, keys: ctx.keys, anchor }, deferred);
    if (typeof why === 'string') {
      cpBad = firstSeq + j;
      cpReason = why;
    } else if (latest === null || why.attested > latest) {
      latest = why.attested;
    }
  }

  const signatures = ctx.signatures ? signatureScan(n, firstSeq, (j) => rawSigCheck(rows[j] as RawRow, tenant, ctx.keys)) : NO_SIGNATURES;
  const last = n > 0 ? (rows[n - 1] as RawRow) : null;
  return {
    firstSeq,
    count: n,
    chain: { checked: verified, break_at: breakAt, reason },
    checkpoints: { count: cpCount, latest_attested_seq: latest, first_bad_seq: cpBad, reason: cpReason, deferred },
    signatures,
    last: last === null ? null : { seq: last[RAW.seq], hash: last[RAW.hash].toString('hex') },
  };
}

/** The recomputed hash of a stored row, or null when its stored shape is impossible (tampering). */
function rowHash(r: RawRow, tenant: string, seq: number, prev: Buffer | null): Buffer | null {
  const blind = r[RAW.meta_blind];
  const meta = r[RAW.meta];
  let commitment: Buffer | null;
  if (blind !== null) {
    // Erasure destroys blind and meta together; a blind without meta is tampering.
    if (meta === null || blind.length !== 32) return null;
    commitment = metaCommitment(blind, meta);
  } else {
    commitment = r[RAW.meta_commitment];
    if (commitment === null || commitment.length !== 32 || meta !== null) return null;
  }
  const payload = r[RAW.payload_hash];
  if (payload !== null && payload.length !== 32) return null;
  const fields = { tenant, seq, occurred_at: r[RAW.occurred_at], actor: r[RAW.actor], actor_kind: r[RAW.actor_kind], action: r[RAW.action], target_kind: r[RAW.target_kind], target_id: r[RAW.target_id] };
  return recordHash(fields, commitment, payload, prev);
}

// A chain is signed by one key for long runs: its hex id is made once per run, not per record.
let lastKeyId: Buffer | null = null;
let lastKeyHex = '';

function rawSigCheck(r: RawRow, tenant: string, keys: KeySet): SignatureReason | null {
  const keyId = r[RAW.key_id];
  const sig = r[RAW.sig];
  if (keyId === undefined || sig === undefined) return 'sig-invalid';
  if (lastKeyId === null || !keyId.equals(lastKeyId)) {
    lastKeyId = keyId;
    lastKeyHex = keyId.toString('hex');
  }
  const k = keyFor(keys, lastKeyHex, r[RAW.seq]);
  if (k === 'unknown') return 'unknown-key';
  if (k === 'out-of-range') return 'sig-invalid';
  const view = eventSigPreimageView(tenant, r[RAW.seq], r[RAW.hash]);
  if (view === null || !k.verify(view, sig)) return 'sig-invalid';
  return null;
}

