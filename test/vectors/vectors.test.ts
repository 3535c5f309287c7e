/**
 * Golden vectors and the interoperability proof (issue 4 §6): everything the service produces is
 * recomputed with an implementation independent of OpenSSL — @noble/hashes SHA-256/SHA-512 and
 * @noble/ed25519 curve arithmetic — from a preimage encoder written here from the DECISIONS.md text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as ed from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { sealBatch } from '../../src/ledger/chain.js';
import { canonicalMeta } from '../../src/ledger/canonical-json.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { createSigner, createVerifier, parsePublicKey, publicKeyBytes } from '../../src/ledger/signers.js';
import { keySet } from '../../src/ledger/keyset.js';
import { verifyRecords } from '../../src/ledger/verify.js';

// Pure-JS SHA-512 for noble's Ed25519, so not even the hash inside EdDSA goes through OpenSSL/WebCrypto.
ed.hashes.sha512 = sha512;

const ROOT = new URL('../../../', import.meta.url);
const vectorsPath = fileURLToPath(new URL('test/vectors/ledger-v1.json', ROOT));

interface Vector {
  description: string;
  input: AuditDraft;
  meta_canonical: string;
  meta_commitment_preimage_hex: string;
  record_preimage_hex: string;
  event_sig_preimage_hex: string;
  checkpoint_sig_preimage_hex?: string;
  record: AuditRecord;
}
interface VectorFile {
  key: { algorithm: 'ed25519'; seed_hex: string; public_key: string; key_id: string };
  tenant: string;
  records: Vector[];
  erased_record: AuditRecord;
  head: { seq: number; hash: string };
}
const V = JSON.parse(readFileSync(vectorsPath, 'utf8')) as VectorFile;

// ---- An independent encoder, written from DECISIONS.md, sharing no code with src/ledger/preimage.ts ----
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
function cat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
function lp(x: Uint8Array | string): Uint8Array {
  const b = typeof x === 'string' ? utf8(x) : x;
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, b.length, false);
  return cat(len, b);
}
function u64(n: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n), false);
  return out;
}
const zeros = new Uint8Array(32);
function independentPreimage(r: AuditRecord): Uint8Array {
  return cat(
    lp('svc.audit.v1'), lp(r.tenant), u64(r.seq), lp(r.occurred_at), lp(r.actor), lp(r.actor_kind), lp(r.action),
    lp(r.target_kind), lp(r.target_id), hexToBytes(r.meta_commitment),
    r.payload_hash === null ? zeros : hexToBytes(r.payload_hash), hexToBytes(r.prev_hash),
  );
}
const independentCommitment = (blindHex: string, meta: string): Uint8Array =>
  sha256(cat(lp('svc.audit.meta.v1'), lp(hexToBytes(blindHex)), utf8(meta)));
const independentEventPreimage = (tenant: string, seq: number, hashHex: string): Uint8Array =>
  cat(lp('svc.audit.event.v1'), lp(tenant), u64(seq), lp(hexToBytes(hashHex)));
const independentCheckpointPreimage = (tenant: string, seq: number, hashHex: string): Uint8Array =>
  cat(lp('svc.audit.checkpoint.v1'), lp(tenant), u64(seq), lp(hexToBytes(hashHex)));

/** Check one record entirely with the independent implementation. */
function independentlyVerify(r: AuditRecord, publicKey: Uint8Array): void {
  if (r.meta !== null && r.meta_blind !== null) assert.equal(bytesToHex(independentCommitment(r.meta_blind, r.meta)), r.meta_commitment);
  assert.equal(bytesToHex(sha256(independentPreimage(r))), r.hash, `hash of seq ${r.seq}`);
  const msg = independentEventPreimage(r.tenant, r.seq, r.hash);
  assert.ok(ed.verify(Buffer.from(r.sig, 'base64'), msg, publicKey), `signature of seq ${r.seq}`);
}

const seed = hexToBytes(V.key.seed_hex);
const pub = Buffer.from(V.key.public_key, 'base64');

test('the vector key: noble derives the same public key from the seed, key_id = SHA-256(SPKI)[0:16]', () => {
  assert.deepEqual(ed.getPublicKey(seed), new Uint8Array(pub));
  // RFC 8032 §7.1 TEST 1 public key.
  assert.equal(bytesToHex(pub), 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  const spki = cat(hexToBytes('302a300506032b6570032100'), pub);
  assert.equal(bytesToHex(sha256(spki)).slice(0, 32), V.key.key_id);
});

test('the independent encoder reproduces every published preimage, hash and signature', () => {
  assert.equal(V.records.length, 4);
  for (const v of V.records) {
    const r = v.record;
    if (r.action !== 'audit.checkpoint') assert.equal(canonicalMeta(v.input.meta ?? {}), v.meta_canonical);
    assert.equal(r.meta, v.meta_canonical);
    assert.equal(bytesToHex(cat(lp('svc.audit.meta.v1'), lp(hexToBytes(r.meta_blind!)), utf8(r.meta!))), v.meta_commitment_preimage_hex);
    assert.equal(bytesToHex(independentPreimage(r)), v.record_preimage_hex);
    assert.equal(bytesToHex(independentEventPreimage(r.tenant, r.seq, r.hash)), v.event_sig_preimage_hex);
    independentlyVerify(r, pub);
    // Ed25519 is deterministic (RFC 8032 §5.1.6): noble signing the same preimage gives OpenSSL's bytes.
    assert.equal(Buffer.from(ed.sign(hexToBytes(v.event_sig_preimage_hex), seed)).toString('base64'), r.sig);
  }
});

test('the checkpoint vector: independent preimage and noble-verified checkpoint signature', () => {
  const v = V.records[3]!;
  const m = JSON.parse(v.record.meta!) as { attested_seq: number; head_hash: string; checkpoint_sig: string; key_id: string };
  assert.equal(m.attested_seq, 3);
  assert.equal(m.head_hash, V.records[2]!.record.hash);
  assert.equal(m.key_id, V.key.key_id);
  const pre = independentCheckpointPreimage(V.tenant, m.attested_seq, m.head_hash);
  assert.equal(bytesToHex(pre), v.checkpoint_sig_preimage_hex);
  assert.ok(ed.verify(Buffer.from(m.checkpoint_sig, 'base64'), pre, pub));
});

test('the erased record still hashes to its chain position', () => {
  const e = V.erased_record;
  assert.equal(e.meta, null);
  assert.equal(e.meta_blind, null);
  independentlyVerify(e, pub);
  const chain = V.records.map((v) => v.record);
  chain[1] = e;
  const keys = keySet([createVerifier('ed25519', parsePublicKey('ed25519', V.key.public_key))]);
  const rep = verifyRecords(chain, { keys, head: V.head });
  assert.equal(rep.ok, true);
  assert.equal(rep.checkpoints.latest_attested_seq, 3);
});

test('the current code reproduces the vectors from their inputs', () => {
  const pkcs8 = cat(hexToBytes('302e020100300506032b657004220420'), seed);
  const signer = createSigner('ed25519', createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' }));
  assert.equal(publicKeyBytes('ed25519', signer.publicKey).toString('base64'), V.key.public_key);
  let n = 0;
  const recs = sealBatch(null, V.tenant, V.records.map((v) => v.input), signer, {
    fillBlinds: (out) => {
      for (let i = 0; i < out.length; i++) out[i] = Math.floor(i / 32) + 1;
    },
    newId: () => V.records[n++]!.record.id,
  });
  assert.deepEqual(recs, V.records.map((v) => v.record));
  const out = execFileSync(process.execPath, [fileURLToPath(new URL('scripts/gen-vectors.mjs', ROOT)), '--check'], { encoding: 'utf8' });
  assert.match(out, /up to date/);
});

test('differential: random records sealed with OpenSSL verify under the independent implementation', () => {
  const privateKey = createPrivateKey({
    key: Buffer.from(cat(hexToBytes('302e020100300506032b657004220420'), sha256(utf8('diff')))),
    format: 'der',
    type: 'pkcs8',
  });
  const signer = createSigner('ed25519', privateKey);
  const pk = publicKeyBytes('ed25519', signer.publicKey);
  const text = fc.string({ unit: 'grapheme', maxLength: 20 });
  const arbDraft = fc.record({
    actor: text.filter((s) => s.length > 0),
    actor_kind: text,
    action: text.filter((s) => s.length > 0),
    target_kind: text,
    target_id: text,
    meta: fc.dictionary(text, fc.oneof(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null))),
    payload_hash: fc.option(fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bytesToHex(b)), { nil: null }),
  });
  fc.assert(
    fc.property(fc.array(arbDraft, { minLength: 1, maxLength: 5 }), fc.nat(1_000_000), (drafts, startSeq) => {
      const tail = startSeq === 0 ? null : { seq: startSeq, hash: bytesToHex(sha256(u64(startSeq))) };
      for (const r of sealBatch(tail, V.tenant, drafts, signer)) independentlyVerify(r, pk);
    }),
    { numRuns: 40 },
  );
});
