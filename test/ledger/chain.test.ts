import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { applySignatures, hashBatch, sealBatch, signHashes } from '../../src/ledger/chain.js';
import { CHECKPOINT_ACTION, checkpointDraft, parseCheckpointMeta } from '../../src/ledger/checkpoint.js';
import { checkpointSigPreimage, eventSigPreimage, metaCommitment, recordPreimage, ZERO_HASH_HEX } from '../../src/ledger/preimage.js';
import { createVerifier } from '../../src/ledger/signers.js';
import { isCanonicalTimestamp, timestampToEpochMs } from '../../src/ledger/time.js';
import { isUuid7, uuid7EpochMs } from '../../src/ledger/uuid7.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { TENANT, draft, newSigner } from './fixtures.js';

const signer = newSigner();
const verifier = createVerifier('ed25519', signer.publicKey);

function expectedHash(r: AuditRecord): string {
  const pre = recordPreimage(
    r,
    Buffer.from(r.meta_commitment, 'hex'),
    r.payload_hash === null ? null : Buffer.from(r.payload_hash, 'hex'),
    Buffer.from(r.prev_hash, 'hex'),
  );
  return createHash('sha256').update(pre).digest('hex');
}

test('a sealed batch is linked, hashed, committed and signed record by record', () => {
  const recs = sealBatch(null, TENANT, [draft(1), draft(2, { payload_hash: 'ab'.repeat(32) }), draft(3, { meta: undefined })], signer);
  assert.deepEqual(recs.map((r) => r.seq), [1, 2, 3]);
  assert.equal(recs[0]!.prev_hash, ZERO_HASH_HEX);
  for (let i = 0; i < recs.length; i++) {
    const r = recs[i]!;
    if (i > 0) assert.equal(r.prev_hash, recs[i - 1]!.hash);
    assert.equal(r.tenant, TENANT);
    assert.equal(r.hash, expectedHash(r));
    assert.equal(r.meta_commitment, metaCommitment(Buffer.from(r.meta_blind!, 'hex'), r.meta!).toString('hex'));
    assert.ok(verifier.verify(eventSigPreimage(TENANT, r.seq, r.hash), Buffer.from(r.sig, 'base64')));
    assert.equal(r.key_id, signer.keyId);
    assert.ok(isUuid7(r.id));
    assert.ok(isCanonicalTimestamp(r.occurred_at));
    assert.equal(uuid7EpochMs(r.id), timestampToEpochMs(r.occurred_at), 'id carries the record time');
  }
  assert.equal(recs[1]!.payload_hash, 'ab'.repeat(32));
  assert.equal(recs[0]!.meta, '{"i":1,"name":"agent 1","tags":["a","b"]}');
  assert.equal(recs[2]!.meta, '{}', 'absent meta is the empty object');
  assert.ok(recs[0]!.occurred_at < recs[1]!.occurred_at, 'default times increase within a batch');
});

test('every record gets a fresh random blind and a distinct id', () => {
  const recs = sealBatch(null, TENANT, Array.from({ length: 200 }, () => draft(0)), signer);
  assert.equal(new Set(recs.map((r) => r.meta_blind)).size, 200);
  assert.equal(new Set(recs.map((r) => r.meta_commitment)).size, 200, 'same meta, different commitments');
  assert.equal(new Set(recs.map((r) => r.id)).size, 200);
  const ids = recs.map((r) => r.id);
  assert.deepEqual([...ids].sort(), ids, 'UUIDv7 ids sort like the records');
});

test('a batch continues from the tail it is given', () => {
  const a = sealBatch(null, TENANT, [draft(1), draft(2)], signer);
  const b = sealBatch({ seq: 2, hash: a[1]!.hash }, TENANT, [draft(3)], signer);
  assert.equal(b[0]!.seq, 3);
  assert.equal(b[0]!.prev_hash, a[1]!.hash);
  assert.throws(() => sealBatch({ seq: 2, hash: 'XY' }, TENANT, [draft(3)], signer), /tail hash/);
});

test('hash on the main thread + sign elsewhere gives the same records as sealBatch', () => {
  const fixed = { fillBlinds: (b: Buffer) => b.fill(7), newId: () => '01970c2e-4b1a-7000-8000-000000000000' };
  const drafts = [1, 2, 3, 4].map((i) => draft(i, { occurred_at: `2026-06-02T10:00:0${i}.000000000Z` }));
  const whole = sealBatch({ seq: 9, hash: 'cd'.repeat(32) }, TENANT, drafts, signer, fixed);
  const hashed = hashBatch({ seq: 9, hash: 'cd'.repeat(32) }, TENANT, drafts, signer, fixed);
  assert.equal(hashed.firstSeq, 10);
  assert.deepEqual(hashed.tail, { seq: 13, hash: whole[3]!.hash });
  assert.ok(hashed.records.every((r) => r.sig === ''));
  for (let i = 0; i < 4; i++) assert.equal(hashed.hashes.subarray(32 * i, 32 * i + 32).toString('hex'), whole[i]!.hash);
  const sigs = signHashes(signer, TENANT, hashed.firstSeq, hashed.hashes);
  assert.equal(sigs.sigLength, 64);
  assert.deepEqual(applySignatures(hashed, sigs), whole, 'Ed25519 is deterministic, so the split is exact');
  assert.throws(() => applySignatures(hashed, { sigLength: 64, sigs: sigs.sigs.subarray(64) }), /count/);
});

test('a checkpoint draft attests the record before it, signed over the checkpoint preimage', () => {
  const recs = sealBatch(null, TENANT, [draft(1), draft(2), checkpointDraft(), draft(3)], signer);
  const cp = recs[2]!;
  assert.equal(cp.action, CHECKPOINT_ACTION);
  assert.equal(cp.actor, 'system');
  const m = parseCheckpointMeta(cp.meta);
  assert.ok(m);
  assert.equal(m.attested_seq, 2);
  assert.equal(m.head_hash, recs[1]!.hash);
  assert.equal(m.head_hash, cp.prev_hash);
  assert.equal(m.key_id, signer.keyId);
  assert.ok(verifier.verify(checkpointSigPreimage(TENANT, 2, m.head_hash), Buffer.from(m.checkpoint_sig, 'base64')));
  assert.equal(cp.hash, expectedHash(cp));
  assert.throws(() => sealBatch(null, TENANT, [checkpointDraft()], signer), /at least one record/);
});

test('malformed drafts are refused before anything is hashed', () => {
  assert.throws(() => sealBatch(null, TENANT, [draft(1, { payload_hash: 'AB'.repeat(32) })], signer), /payload_hash/);
  assert.throws(() => sealBatch(null, TENANT, [draft(1, { occurred_at: '2026-06-02T10:00:00Z' })], signer), RangeError);
  assert.throws(() => sealBatch(null, TENANT, [draft(1, { meta: { n: NaN } })], signer), /non-finite/);
  assert.throws(() => sealBatch(null, TENANT, [draft(1, { action: '' })], signer), /action/);
  assert.throws(() => sealBatch(null, TENANT, [{ ...draft(1), target_id: undefined as unknown as string }], signer), /target_id/);
  assert.deepEqual(sealBatch(null, TENANT, [], signer), []);
});
