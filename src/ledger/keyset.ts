/** The public keys a verification trusts, each optionally bound to the seq range it signed. */
import { createPublicKey } from 'node:crypto';
import { createVerifier, spkiDer, type SignatureAlgorithm, type Verifier } from './signers.js';

/** One trusted key. A retired key carries `last_seq`; it only vouches for records in [first_seq, last_seq]. */
export interface KeyEntry {
  verifier: Verifier;
  first_seq?: number;
  last_seq?: number;
}

/** Trusted keys by key_id. */
export type KeySet = ReadonlyMap<string, KeyEntry>;

/** A structured-clone-safe description of a trusted key, for handing a key set to a worker. */
export interface KeySpec {
  key_id: string;
  algorithm: SignatureAlgorithm;
  /** SPKI DER */
  spki: Uint8Array;
  first_seq?: number;
  last_seq?: number;
}

/** Build a key set from verifiers (unbounded) and/or entries with seq ranges. */
export function keySet(keys: Iterable<Verifier | KeyEntry>): Map<string, KeyEntry> {
  const out = new Map<string, KeyEntry>();
  for (const k of keys) {
    const entry: KeyEntry = 'verifier' in k ? k : { verifier: k };
    out.set(entry.verifier.keyId, entry);
  }
  return out;
}

/** The verifier that may vouch for `seq` under `keyId`: the entry, 'unknown', or 'out-of-range'. */
export function keyFor(keys: KeySet, keyId: string, seq: number): Verifier | 'unknown' | 'out-of-range' {
  const e = keys.get(keyId);
  if (e === undefined) return 'unknown';
  if ((e.first_seq !== undefined && seq < e.first_seq) || (e.last_seq !== undefined && seq > e.last_seq)) return 'out-of-range';
  return e.verifier;
}

/** Describe a key set for transfer to a worker. */
export function keySpecs(keys: KeySet): KeySpec[] {
  const out: KeySpec[] = [];
  for (const [key_id, e] of keys) {
    const spec: KeySpec = { key_id, algorithm: e.verifier.algorithm, spki: spkiDer(e.verifier.publicKey) };
    if (e.first_seq !== undefined) spec.first_seq = e.first_seq;
    if (e.last_seq !== undefined) spec.last_seq = e.last_seq;
    out.push(spec);
  }
  return out;
}

/** Rebuild a key set from specs; throws when a spec's key does not hash to its key_id. */
export function keySetFromSpecs(specs: readonly KeySpec[]): Map<string, KeyEntry> {
  const out = new Map<string, KeyEntry>();
  for (const s of specs) {
    const verifier = createVerifier(s.algorithm, createPublicKey({ key: Buffer.from(s.spki), format: 'der', type: 'spki' }));
    if (verifier.keyId !== s.key_id) throw new TypeError(`key spec ${s.key_id} does not match its key`);
    const entry: KeyEntry = { verifier };
    if (s.first_seq !== undefined) entry.first_seq = s.first_seq;
    if (s.last_seq !== undefined) entry.last_seq = s.last_seq;
    out.set(s.key_id, entry);
  }
  return out;
}
