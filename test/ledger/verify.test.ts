import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sealBatch } from '../../src/ledger/chain.js';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { keySet } from '../../src/ledger/keyset.js';
import { canonicalMeta } from '../../src/ledger/canonical-json.js';
import { checkpointSigPreimage, eventSigPreimage, metaCommitment, recordHash } from '../../src/ledger/preimage.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { createVerifier } from '../../src/ledger/signers.js';
import { verifyChunk } from '../../src/ledger/verify-chunk.js';
import { mergeChunks, verifyRecords, type VerifyReport } from '../../src/ledger/verify.js';
import { OTHER_TENANT, TENANT, buildChain, draft, headOf, newSigner, trust } from './fixtures.js';

const signer = newSigner();
const keys = trust(signer);
const chain = buildChain(signer, 120, { batch: 17, checkpointEvery: 25 });

test('an intact chain verifies: the exact report shape', () => {
  const report = verifyRecords(chain, { keys, head: headOf(chain) });
  const expected: VerifyReport = {
    ok: true,
    chain: { ok: true, checked: 120, break_at: null, reason: null },
    checkpoints: { ok: true, status: 'ok', count: 4, latest_attested_seq: 99, first_bad_seq: null, reason: null },
    signatures: { ok: true, checked: 120, first_bad_seq: null, reason: null },
  };
  assert.deepEqual(report, expected);
  assert.deepEqual(Object.keys(report), ['ok', 'chain', 'checkpoints', 'signatures']);
});

test('no records: no-events, and not ok', () => {
  const r = verifyRecords([], { keys, tenant: TENANT });
  assert.equal(r.ok, false);
  assert.deepEqual(r.chain, { ok: true, checked: 0, break_at: null, reason: 'no-events' });
  assert.deepEqual(r.checkpoints, {
    ok: true,
    status: 'pending',
    count: 0,
    latest_attested_seq: null,
    first_bad_seq: null,
    reason: 'no-checkpoints',
  });
});

test('a chain without checkpoints is pending, which does not fail verification', () => {
  const plain = buildChain(signer, 10);
  const r = verifyRecords(plain, { keys });
  assert.equal(r.ok, true);
  assert.equal(r.checkpoints.status, 'pending');
  assert.equal(r.checkpoints.reason, 'no-checkpoints');
});

test('truncation is detected only against the heads table', () => {
  const cut = chain.slice(0, 100);
  assert.equal(verifyRecords(cut, { keys }).ok, true, 'a prefix is self-consistent');
  const r = verifyRecords(cut, { keys, head: headOf(chain) });
  assert.equal(r.ok, false);
  assert.deepEqual(r.chain, { ok: false, checked: 100, break_at: 101, reason: 'tail-truncated' });
  const none = verifyRecords([], { keys, tenant: TENANT, head: headOf(chain) });
  assert.deepEqual(none.chain, { ok: false, checked: 0, break_at: 1, reason: 'tail-truncated' });
});

test('a rewritten tail that does not match the head is a hash mismatch at the head seq', () => {
  const forked = chain.slice(0, 119).concat(sealBatch(headOf(chain.slice(0, 119)), TENANT, [draft(999)], signer));
  assert.equal(verifyRecords(forked, { keys }).ok, true, 'internally consistent fork');
  const r = verifyRecords(forked, { keys, head: headOf(chain) });
  assert.deepEqual(r.chain, { ok: false, checked: 119, break_at: 120, reason: 'hash-mismatch' });
});

test('verifying a suffix from a seq, with and without the record before it', () => {
  const suffix = chain.slice(60);
  const anchor = { seq: chain[59]!.seq, hash: chain[59]!.hash };
  const r = verifyRecords(suffix, { keys, from: 61, anchor, head: headOf(chain) });
  assert.equal(r.ok, true);
  assert.equal(r.chain.checked, 60);
  assert.equal(r.checkpoints.count, 2);
  assert.equal(verifyRecords(suffix, { keys, from: 61 }).ok, true, 'first link taken on trust without an anchor');
  const wrong = verifyRecords(suffix, { keys, from: 61, anchor: { seq: 60, hash: 'ab'.repeat(32) } });
  assert.deepEqual(wrong.chain, { ok: false, checked: 0, break_at: 61, reason: 'prev-mismatch' });
  const gap = verifyRecords(suffix, { keys, from: 60 });
  assert.deepEqual(gap.chain, { ok: false, checked: 0, break_at: 60, reason: 'seq-gap' });
});

test('chunked verification gives the same report as one pass, for every chunk size', () => {
  const whole = verifyRecords(chain, { keys, head: headOf(chain) });
  for (const size of [1, 2, 7, 25, 26, 119]) {
    assert.deepEqual(verifyRecords(chain, { keys, head: headOf(chain), chunkSize: size }), whole, `chunk ${size}`);
  }
  const broken = chain.map((r) => ({ ...r }));
  broken[70]!.actor = 'user:mallory';
  const one = verifyRecords(broken, { keys });
  for (const size of [1, 10, 33, 70, 71]) assert.deepEqual(verifyRecords(broken, { keys, chunkSize: size }), one, `chunk ${size}`);
  assert.equal(one.chain.break_at, 71);
});

test('chunks can be verified independently and merged in order', () => {
  const parts = [chain.slice(0, 40), chain.slice(40, 90), chain.slice(90)];
  let from = 1;
  let anchor: { seq: number; hash: string } | null = null;
  const reports = parts.map((p) => {
    const rep = verifyChunk(p, { tenant: TENANT, firstSeq: from, anchor, keys, signatures: true, head: headOf(chain) });
    from += p.length;
    anchor = rep.last;
    return rep;
  });
  const merged = mergeChunks(reports, { from: 1, head: headOf(chain), resolve: (s) => chain[s - 1]?.hash });
  assert.deepEqual(merged, verifyRecords(chain, { keys, head: headOf(chain) }));
});

test('signatures can be skipped for the fast chain + checkpoints pass', () => {
  const forged = chain.map((r) => ({ ...r }));
  forged[5]!.sig = forged[6]!.sig;
  const fast = verifyRecords(forged, { keys, signatures: false });
  assert.equal(fast.ok, true);
  assert.deepEqual(fast.signatures, { ok: true, checked: 0, first_bad_seq: null, reason: null });
  const full = verifyRecords(forged, { keys });
  assert.deepEqual(full.signatures, { ok: false, checked: 5, first_bad_seq: 6, reason: 'sig-invalid' });
  assert.equal(full.ok, false);
});

test('a retired key only vouches for records inside its seq range', () => {
  const next = newSigner('ecdsa-p256-sha256');
  const first = chain.slice(0, 50);
  const rest = buildChain(next, 30, { tail: headOf(first) });
  const all = first.concat(rest);
  const ranged = keySet([
    { verifier: createVerifier('ed25519', signer.publicKey), first_seq: 1, last_seq: 50 },
    { verifier: createVerifier('ecdsa-p256-sha256', next.publicKey), first_seq: 51 },
  ]);
  assert.equal(verifyRecords(all, { keys: ranged }).ok, true);
  // The holder of the old key forges a record after retirement.
  const forged = all.slice(0, 79).concat(sealBatch(headOf(all.slice(0, 79)), TENANT, [draft(5)], signer));
  const r = verifyRecords(forged, { keys: ranged });
  assert.equal(r.chain.ok, true);
  assert.deepEqual(r.signatures, { ok: false, checked: 79, first_bad_seq: 80, reason: 'key-out-of-range' });
  // Without any range (both keys pinned bare), a key that signs again after another took over is out of range too.
  const bare = keySet([createVerifier('ed25519', signer.publicKey), createVerifier('ecdsa-p256-sha256', next.publicKey)]);
  assert.deepEqual(verifyRecords(forged, { keys: bare }).signatures, {
    ok: false,
    checked: 79,
    first_bad_seq: 80,
    reason: 'key-out-of-range',
  });
  assert.deepEqual(
    verifyRecords(forged, { keys: bare, chunkSize: 7 }).signatures,
    { ok: false, checked: 79, first_bad_seq: 80, reason: 'key-out-of-range' },
    'across chunks',
  );
  assert.equal(verifyRecords(all, { keys: bare, chunkSize: 7 }).ok, true);
  const early = keySet([
    { verifier: createVerifier('ed25519', signer.publicKey), first_seq: 10 },
    createVerifier('ecdsa-p256-sha256', next.publicKey),
  ]);
  assert.equal(verifyRecords(all, { keys: early }).signatures.first_bad_seq, 1);
});

test('a key the verifier does not hold: unknown-key, for events and checkpoints', () => {
  const r = verifyRecords(chain, { keys: new Map() });
  assert.deepEqual(r.signatures, { ok: false, checked: 0, first_bad_seq: 1, reason: 'unknown-key' });
  assert.equal(r.checkpoints.status, 'failed');
  assert.equal(r.checkpoints.reason, 'unknown-key');
  assert.equal(r.checkpoints.first_bad_seq, 25);
  const fast = verifyRecords(chain, { keys: new Map(), signatures: false });
  assert.equal(fast.ok, false, 'checkpoints still need keys');
});

test('checkpoint failures: bad signature, wrong link, reported at the checkpoint seq', () => {
  const base = chain.slice(0, 30);
  const sealed = base.concat(sealBatch(headOf(base), TENANT, [{ ...checkpointDraft(), meta: { attested_seq: 1 } }], signer));
  const good = verifyRecords(sealed, { keys });
  assert.equal(good.checkpoints.status, 'ok', 'the sealer computes checkpoint meta itself, ignoring the draft');
  assert.equal(good.checkpoints.latest_attested_seq, 30);

  const other = newSigner();
  const both = trust(signer, other);
  const wrongSig = buildWithMeta(base, (head) => ({
    attested_seq: head.seq,
    head_hash: head.hash,
    checkpoint_sig: other.sign(checkpointSigPreimage(TENANT, head.seq + 1, head.hash)).toString('base64'),
    key_id: other.keyId,
  }));
  let r = verifyRecords(wrongSig, { keys: both });
  assert.equal(r.chain.ok, true);
  assert.deepEqual(r.checkpoints, {
    ok: false,
    status: 'failed',
    count: 2,
    latest_attested_seq: 24,
    first_bad_seq: 31,
    reason: 'checkpoint-sig-invalid',
  });
  assert.equal(r.ok, false);

  const wrongHead = buildWithMeta(base, (head) => ({
    attested_seq: head.seq - 1,
    head_hash: head.hash,
    checkpoint_sig: signer.sign(checkpointSigPreimage(TENANT, head.seq - 1, head.hash)).toString('base64'),
    key_id: signer.keyId,
  }));
  r = verifyRecords(wrongHead, { keys });
  assert.equal(r.checkpoints.reason, 'checkpoint-link-mismatch');
  assert.equal(r.checkpoints.first_bad_seq, 31);

  const future = buildWithMeta(base, (head) => ({
    attested_seq: head.seq + 5,
    head_hash: head.hash,
    checkpoint_sig: '',
    key_id: signer.keyId,
  }));
  assert.equal(verifyRecords(future, { keys }).checkpoints.reason, 'checkpoint-link-mismatch');
  const garbage = buildWithMeta(base, () => ({ attested_seq: 'x' }));
  assert.equal(verifyRecords(garbage, { keys }).checkpoints.reason, 'checkpoint-link-mismatch');
});

/** Append a checkpoint with meta chosen by the test, hashed and signed as an attacker holding the key would. */
function buildWithMeta(prev: AuditRecord[], meta: (head: { seq: number; hash: string }) => Record<string, unknown>): AuditRecord[] {
  const head = headOf(prev);
  return prev.concat(resealed(head, meta(head)));
}

function resealed(head: { seq: number; hash: string }, meta: Record<string, unknown>): AuditRecord {
  const text = canonicalMeta(meta);
  const blind = Buffer.alloc(32, 9);
  const commitment = metaCommitment(blind, text);
  const fields = {
    tenant: TENANT,
    seq: head.seq + 1,
    occurred_at: '2026-06-02T10:00:00.000000000Z',
    actor: 'system',
    actor_kind: 'system',
    action: 'audit.checkpoint',
    target_kind: 'audit.chain',
    target_id: '',
  };
  const hash = recordHash(fields, commitment, null, Buffer.from(head.hash, 'hex'));
  return {
    id: '01970c2e-4b1a-7000-8000-000000000000',
    ...fields,
    meta: text,
    meta_blind: blind.toString('hex'),
    meta_commitment: commitment.toString('hex'),
    payload_hash: null,
    prev_hash: head.hash,
    hash: hash.toString('hex'),
    sig: signer.sign(eventSigPreimage(TENANT, head.seq + 1, hash)).toString('base64'),
    key_id: signer.keyId,
  };
}

test('erased meta still verifies; half-erased meta does not', () => {
  const erased = chain.map((r, i) => (i === 10 ? { ...r, meta: null, meta_blind: null } : r));
  assert.equal(verifyRecords(erased, { keys }).ok, true);
  const half = chain.map((r, i) => (i === 10 ? { ...r, meta_blind: null } : r));
  assert.deepEqual(verifyRecords(half, { keys }).chain, { ok: false, checked: 10, break_at: 11, reason: 'hash-mismatch' });
});

test('records of another chain do not verify as this chain', () => {
  const other = buildChain(signer, 5, { tenant: OTHER_TENANT });
  const r = verifyRecords(other, { keys, tenant: TENANT });
  assert.deepEqual(r.chain, { ok: false, checked: 0, break_at: 1, reason: 'hash-mismatch' });
  assert.equal(r.signatures.reason, 'sig-invalid');
});

test('records of the wrong shape (e.g. from a hand-edited export file) fail verification without throwing', () => {
  const cases: Array<[string, unknown]> = [
    ['seq', '5'],
    ['seq', -1],
    ['actor', 42],
    ['meta', { a: 1 }],
    ['payload_hash', 7],
    ['hash', null],
    ['sig', null],
    ['key_id', 1],
    ['tenant', undefined],
  ];
  for (const [field, value] of cases) {
    const recs = chain.slice(0, 10).map((r) => ({ ...r }));
    (recs[4] as unknown as Record<string, unknown>)[field] = value;
    const rep = verifyRecords(recs, { keys, tenant: TENANT });
    assert.equal(rep.ok, false, `${field}=${String(value)}`);
    const at = rep.chain.break_at ?? rep.signatures.first_bad_seq;
    assert.equal(at, 5, `${field}=${String(value)}`);
  }
});
