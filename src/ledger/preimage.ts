/**
 * Byte-exact preimages of the audit ledger (DECISIONS.md "Audit ledger"; binding):
 *   lp(x)            = u32be(len(x)) ‖ x
 *   record hash      = SHA-256(lp("svc.audit.v1") ‖ lp(tenant) ‖ u64be(seq) ‖ lp(occurred_at) ‖ lp(actor) ‖
 *                      lp(actor_kind) ‖ lp(action) ‖ lp(target_kind) ‖ lp(target_id) ‖ meta_commitment[32] ‖
 *                      payload_hash[32 | zeros] ‖ prev_hash[32 | zeros at seq 1])
 *   meta commitment  = SHA-256(lp("svc.audit.meta.v1") ‖ lp(blind[32]) ‖ meta bytes)
 *   event signature  over lp("svc.audit.event.v1") ‖ lp(tenant) ‖ u64be(seq) ‖ lp(hash[32])
 *   checkpoint sig   over lp("svc.audit.checkpoint.v1") ‖ lp(tenant) ‖ u64be(attested_seq) ‖ lp(head_hash[32])
 * Strings are UTF-8. `lp(hash)` is over the 32 raw digest bytes, never the hex text.
 * This runs per record on the hot path: every builder writes into one reusable scratch buffer, and the
 * `*Hex` variants decode stored hex straight into it, so no intermediate Buffers are allocated.
 */
import { hash as oneShotHash } from 'node:crypto';

export const RECORD_DOMAIN = 'svc.audit.v1';
export const META_DOMAIN = 'svc.audit.meta.v1';
export const EVENT_DOMAIN = 'svc.audit.event.v1';
export const CHECKPOINT_DOMAIN = 'svc.audit.checkpoint.v1';

/** 32 zero bytes: prev_hash at seq 1, and payload_hash when there is none. */
export const ZERO_HASH: Buffer = Buffer.alloc(32);
/** Hex of {@link ZERO_HASH}: the stored prev_hash of seq 1. */
export const ZERO_HASH_HEX = '0'.repeat(64);

const HEX32 = /^[0-9a-f]{64}$/;

/** True for a canonical (lowercase) 64-digit hex SHA-256; uppercase would decode to the same bytes, so it is refused. */
export function isHex32(text: string): boolean {
  return text.length === 64 && HEX32.test(text);
}

/** A fields view of the record that the hash covers (besides the three 32-byte values). */
export interface RecordHashFields {
  tenant: string;
  seq: number;
  occurred_at: string;
  actor: string;
  actor_kind: string;
  action: string;
  target_kind: string;
  target_id: string;
}

let scratch = Buffer.allocUnsafe(4096);

function ensure(capacity: number): Buffer {
  if (scratch.length < capacity) scratch = Buffer.allocUnsafe(Math.max(capacity, scratch.length * 2));
  return scratch;
}

/** Write lp(utf8(s)) at off; returns the new offset. Capacity must already allow 4 + 3 * s.length. */
function writeLpString(buf: Buffer, off: number, s: string): number {
  const n = buf.write(s, off + 4, 'utf8');
  buf.writeUInt32BE(n, off);
  return off + 4 + n;
}

function writeLpBytes(buf: Buffer, off: number, b: Uint8Array): number {
  buf.writeUInt32BE(b.length, off);
  buf.set(b, off + 4);
  return off + 4 + b.length;
}

function writeU64(buf: Buffer, off: number, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`seq must be a non-negative safe integer, got ${v}`);
  buf.writeUInt32BE(Math.floor(v / 0x1_0000_0000), off);
  buf.writeUInt32BE(v >>> 0, off + 4);
  return off + 8;
}

/** lp(x) as a fresh Buffer: u32 big-endian byte length followed by the bytes (strings as UTF-8). */
export function lp(x: Uint8Array | string): Buffer {
  const bytes = typeof x === 'string' ? Buffer.from(x, 'utf8') : x;
  const out = Buffer.allocUnsafe(4 + bytes.length);
  writeLpBytes(out, 0, bytes);
  return out;
}

function recordFieldsBound(f: RecordHashFields): number {
  return (
    4 * 8 + RECORD_DOMAIN.length + 8 + 96 +
    3 * (f.tenant.length + f.occurred_at.length + f.actor.length + f.actor_kind.length + f.action.length +
      f.target_kind.length + f.target_id.length)
  );
}

function writeRecordFields(buf: Buffer, f: RecordHashFields): number {
  let off = writeLpString(buf, 0, RECORD_DOMAIN);
  off = writeLpString(buf, off, f.tenant);
  off = writeU64(buf, off, f.seq);
  off = writeLpString(buf, off, f.occurred_at);
  off = writeLpString(buf, off, f.actor);
  off = writeLpString(buf, off, f.actor_kind);
  off = writeLpString(buf, off, f.action);
  off = writeLpString(buf, off, f.target_kind);
  return writeLpString(buf, off, f.target_id);
}

function writeRecordBinary(f: RecordHashFields, commitment: Uint8Array, payload: Uint8Array | null, prev: Uint8Array | null): number {
  if (commitment.length !== 32 || (payload !== null && payload.length !== 32) || (prev !== null && prev.length !== 32)) {
    throw new RangeError('meta_commitment, payload_hash and prev_hash must be 32 bytes');
  }
  const buf = ensure(recordFieldsBound(f));
  let off = writeRecordFields(buf, f);
  buf.set(commitment, off);
  buf.set(payload ?? ZERO_HASH, off + 32);
  buf.set(prev ?? ZERO_HASH, off + 64);
  off += 96;
  return off;
}

/** The record hash preimage as a fresh Buffer (for vectors and tests; the hot path uses {@link recordHash}). */
export function recordPreimage(f: RecordHashFields, commitment: Uint8Array, payload: Uint8Array | null, prev: Uint8Array | null): Buffer {
  const n = writeRecordBinary(f, commitment, payload, prev);
  return Buffer.from(scratch.subarray(0, n));
}

/** SHA-256 of the record preimage, from binary inputs (the sealing path). */
export function recordHash(f: RecordHashFields, commitment: Uint8Array, payload: Uint8Array | null, prev: Uint8Array | null): Buffer {
  const n = writeRecordBinary(f, commitment, payload, prev);
  return oneShotHash('sha256', scratch.subarray(0, n), 'buffer');
}

/**
 * Hex SHA-256 of the record preimage from stored hex fields (the verification path), or null when a
 * hex field is not canonical lowercase hex of 32 bytes (a tampered field must never decode "close enough").
 */
export function recordHashFromHex(
  f: RecordHashFields,
  commitmentHex: string,
  payloadHex: string | null,
  prevHex: string,
): string | null {
  if (!isHex32(commitmentHex) || !isHex32(prevHex) || (payloadHex !== null && !isHex32(payloadHex))) return null;
  const buf = ensure(recordFieldsBound(f));
  const off = writeRecordFields(buf, f);
  buf.write(commitmentHex, off, 'hex');
  if (payloadHex === null) buf.fill(0, off + 32, off + 64);
  else buf.write(payloadHex, off + 32, 'hex');
  buf.write(prevHex, off + 64, 'hex');
  return oneShotHash('sha256', buf.subarray(0, off + 96), 'hex');
}

/** lp("svc.audit.meta.v1") ‖ u32be(32): the meta commitment preimage before the blind's bytes. */
export const META_PREFIX: Buffer = Buffer.concat([lp(META_DOMAIN), Buffer.from([0, 0, 0, 32])]);

/** Meta commitment SHA-256(lp("svc.audit.meta.v1") ‖ lp(blind[32]) ‖ meta bytes) from binary inputs. */
export function metaCommitment(blind: Uint8Array, metaText: string): Buffer {
  const n = writeMetaPreimage(blind, metaText);
  return oneShotHash('sha256', scratch.subarray(0, n), 'buffer');
}

/** The meta commitment preimage as a fresh Buffer (for vectors and tests). */
export function metaCommitmentPreimage(blind: Uint8Array, metaText: string): Buffer {
  const n = writeMetaPreimage(blind, metaText);
  return Buffer.from(scratch.subarray(0, n));
}

function writeMetaPreimage(blind: Uint8Array, metaText: string): number {
  if (blind.length !== 32) throw new RangeError('meta blind must be 32 bytes');
  const buf = ensure(META_PREFIX.length + 32 + 3 * metaText.length);
  META_PREFIX.copy(buf, 0);
  buf.set(blind, META_PREFIX.length);
  const start = META_PREFIX.length + 32;
  return start + buf.write(metaText, start, 'utf8');
}

/** Hex meta commitment from the stored blind hex and meta text, or null when the blind is not canonical hex. */
export function metaCommitmentFromHex(blindHex: string, metaText: string): string | null {
  return isHex32(blindHex) ? commitmentOfHexBlind(blindHex, metaText) : null;
}

/**
 * {@link metaCommitmentFromHex} for a blind that is lowercase hex by construction (SQLite's
 * `lower(hex(blob))`): the same value, with the canonical-hex check reduced to the length (such a
 * text is always lowercase hex digits). The export reader runs it once per record.
 */
export function metaCommitmentFromLowerHex(blindHex: string, metaText: string): string | null {
  return blindHex.length === 64 ? commitmentOfHexBlind(blindHex, metaText) : null;
}

/** The hex commitment of a blind given as 64 checked hex digits. */
function commitmentOfHexBlind(blindHex: string, metaText: string): string {
  const buf = ensure(META_PREFIX.length + 32 + 3 * metaText.length);
  META_PREFIX.copy(buf, 0);
  buf.write(blindHex, META_PREFIX.length, 'hex');
  const start = META_PREFIX.length + 32;
  const n = start + buf.write(metaText, start, 'utf8');
  return oneShotHash('sha256', buf.subarray(0, n), 'hex');
}

function writeSigPreimage(domain: string, tenant: string, seq: number, digest: Uint8Array | string): number {
  const buf = ensure(4 * 3 + domain.length + 3 * tenant.length + 8 + 32);
  let off = writeLpString(buf, 0, domain);
  off = writeLpString(buf, off, tenant);
  off = writeU64(buf, off, seq);
  buf.writeUInt32BE(32, off);
  if (typeof digest === 'string') {
    if (!isHex32(digest)) return -1;
    buf.write(digest, off + 4, 'hex');
  } else {
    if (digest.length !== 32) throw new RangeError('hash must be 32 bytes');
    buf.set(digest, off + 4);
  }
  return off + 36;
}

/**
 * The event-signature preimage as a view of the shared scratch buffer, valid only until the next call
 * into this module (sign or verify it immediately). `hash` is raw bytes or stored hex; null when the hex
 * is not canonical.
 */
export function eventSigPreimageView(tenant: string, seq: number, hash: Uint8Array | string): Buffer | null {
  const n = writeSigPreimage(EVENT_DOMAIN, tenant, seq, hash);
  return n < 0 ? null : scratch.subarray(0, n);
}

/** The event-signature preimage as a fresh Buffer. */
export function eventSigPreimage(tenant: string, seq: number, hash: Uint8Array | string): Buffer {
  const view = eventSigPreimageView(tenant, seq, hash);
  if (view === null) throw new RangeError('hash must be canonical hex of 32 bytes');
  return Buffer.from(view);
}

/** The checkpoint-signature preimage as a view of the shared scratch buffer (see {@link eventSigPreimageView}). */
export function checkpointSigPreimageView(tenant: string, attestedSeq: number, headHash: Uint8Array | string): Buffer | null {
  const n = writeSigPreimage(CHECKPOINT_DOMAIN, tenant, attestedSeq, headHash);
  return n < 0 ? null : scratch.subarray(0, n);
}

/** The checkpoint-signature preimage as a fresh Buffer. */
export function checkpointSigPreimage(tenant: string, attestedSeq: number, headHash: Uint8Array | string): Buffer {
  const view = checkpointSigPreimageView(tenant, attestedSeq, headHash);
  if (view === null) throw new RangeError('head hash must be canonical hex of 32 bytes');
  return Buffer.from(view);
}
