/** Tamper detection over arrays of sealed records (issue 4 §7, pure level): every change is named and located. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sealBatch } from '../../src/ledger/chain.js';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { keySet } from '../../src/ledger/keyset.js';
import { eventSigPreimage, metaCommitment, recordHash } from '../../src/ledger/preimage.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { createVerifier } from '../../src/ledger/signers.js';
import { verifyRecords, type VerifyReport } from '../../src/ledger/verify.js';
import { TENANT, draft, headOf, newSigner, trust } from './fixtures.js';

const signer = newSigner();
const keys = trust(signer);
const drafts: AuditDraft[] = [];
for (let i = 1; i <= 40; i++) {
  if (i % 10 === 0) drafts.push(checkpointDraft());
  else
    drafts.push(
      draft(
        i,
        i % 2 === 0 ? { payload_hash: (i % 16).toString(16).repeat(64) } : { meta: { i, note: `n${i}`, nested: { x: [i, true, null] } } },
      ),
    );
}
const chain = sealBatch(null, TENANT, drafts, signer);
const head = headOf(chain);
const verify = (recs: readonly AuditRecord[], k = keys): VerifyReport => verifyRecords(recs, { keys: k, tenant: TENANT, head });
const clone = (): AuditRecord[] => chain.map((r) => ({ ...r }));

test('the untouched fixture chain verifies', () => {
  assert.equal(verify(chain).ok, true);
  assert.equal(verify(chain).checkpoints.count, 4);
});

type StrField = Exclude<keyof AuditRecord, 'seq' | 'id'>;
// `id` is outside the hash preimage fixed by DECISIONS.md, so it is not tamper-evident (see docs).
const CHAIN_FIELDS: StrField[] = [
  'tenant',
  'occurred_at',
  'actor',
  'actor_kind',
  'action',
  'target_kind',
  'target_id',
  'meta',
  'meta_blind',
  'meta_commitment',
  'payload_hash',
  'hash',
];

/** Change one character of `s` by xor-ing its code unit with `mask` (never a no-op), or invent a value for null/empty. */
function flip(s: string | null, at: number, mask: number): string {
  if (s === null || s.length === 0) return 'ab'.repeat(32);
  const j = at % s.length;
  const c = s.charCodeAt(j);
  return s.slice(0, j) + String.fromCharCode(c ^ mask) + s.slice(j + 1);
}

test('flipping any byte of any hashed field: hash-mismatch at that seq', () => {
  fc.assert(
    fc.property(fc.nat(39), fc.constantFrom(...CHAIN_FIELDS), fc.nat(10_000), fc.integer({ min: 1, max: 127 }), (i, field, at, mask) => {
      const recs = clone();
      const r = recs[i]!;
      (r as unknown as Record<string, string | null>)[field] = flip(r[field] as string | null, at, mask);
      const rep = verify(recs);
      assert.equal(rep.ok, false);
      assert.deepEqual(rep.chain, { ok: false, checked: i, break_at: i + 1, reason: 'hash-mismatch' }, `${field} of seq ${i + 1}`);
    }),
    { numRuns: 250 },
  );
});

test('flipping a byte of prev_hash: prev-mismatch at that seq', () => {
  fc.assert(
    fc.property(fc.nat(39), fc.nat(63), fc.integer({ min: 1, max: 127 }), (i, at, mask) => {
      const recs = clone();
      recs[i]!.prev_hash = flip(recs[i]!.prev_hash, at, mask);
      assert.deepEqual(verify(recs).chain, { ok: false, checked: i, break_at: i + 1, reason: 'prev-mismatch' });
    }),
    { numRuns: 60 },
  );
});

test('changing a seq: seq-gap at that position', () => {
  fc.assert(
    fc.property(fc.nat(39), fc.integer({ min: -50, max: 50 }).filter((d) => d !== 0), (i, delta) => {
      const recs = clone();
      recs[i]!.seq += delta;
      assert.deepEqual(verify(recs).chain, { ok: false, checked: i, break_at: i + 1, reason: 'seq-gap' });
    }),
    { numRuns: 60 },
  );
});

test('flipping a byte of a signature: sig-invalid at that seq, chain intact', () => {
  fc.assert(
    fc.property(fc.nat(39), fc.nat(87), fc.integer({ min: 1, max: 127 }), (i, at, mask) => {
      const recs = clone();
      recs[i]!.sig = flip(recs[i]!.sig, at, mask);
      const rep = verify(recs);
      assert.equal(rep.chain.ok, true);
      assert.deepEqual(rep.signatures, { ok: false, checked: i, first_bad_seq: i + 1, reason: 'sig-invalid' });
      assert.equal(rep.ok, false);
    }),
    { numRuns: 120 },
  );
});

test('flipping a byte of key_id: unknown-key at that seq', () => {
  fc.assert(
    fc.property(fc.nat(39), fc.nat(31), fc.integer({ min: 1, max: 127 }), (i, at, mask) => {
      const recs = clone();
      recs[i]!.key_id = flip(recs[i]!.key_id, at, mask);
      assert.deepEqual(verify(recs).signatures, { ok: false, checked: i, first_bad_seq: i + 1, reason: 'unknown-key' });
    }),
    { numRuns: 40 },
  );
});

test('deleting a middle record: seq-gap at the missing seq', () => {
  const recs = clone();
  recs.splice(17, 1);
  const rep = verify(recs);
  assert.deepEqual(rep.chain, { ok: false, checked: 17, break_at: 18, reason: 'seq-gap' });
  assert.equal(rep.checkpoints.latest_attested_seq, 9, 'checkpoints after the break are not trusted');
});

test('deleting the tail: tail-truncated against the head, invisible without it', () => {
  const recs = clone().slice(0, 33);
  assert.deepEqual(verify(recs).chain, { ok: false, checked: 33, break_at: 34, reason: 'tail-truncated' });
  assert.equal(verifyRecords(recs, { keys, tenant: TENANT }).ok, true);
});

test('reordering two records: seq-gap at the first moved position', () => {
  const recs = clone();
  [recs[21], recs[22]] = [recs[22]!, recs[21]!];
  assert.deepEqual(verify(recs).chain, { ok: false, checked: 21, break_at: 22, reason: 'seq-gap' });
  const renumbered = clone();
  [renumbered[21], renumbered[22]] = [renumbered[22]!, renumbered[21]!];
  renumbered[21]!.seq = 22;
  renumbered[22]!.seq = 23;
  assert.deepEqual(verify(renumbered).chain, { ok: false, checked: 21, break_at: 22, reason: 'prev-mismatch' });
});

test("replacing a signature with another record's: sig-invalid", () => {
  const recs = clone();
  recs[12]!.sig = recs[13]!.sig;
  assert.deepEqual(verify(recs).signatures, { ok: false, checked: 12, first_bad_seq: 13, reason: 'sig-invalid' });
});

test('swapping in a record signed by another key', () => {
  const mallory = newSigner();
  // Same seq and prev as the genuine record 30, sealed by another key.
  const swapped = clone();
  const [fake] = sealBatch(headOf(chain.slice(0, 29)), TENANT, [draft(30)], mallory);
  swapped[29] = fake!;
  let rep = verify(swapped);
  assert.deepEqual(rep.chain, { ok: false, checked: 30, break_at: 31, reason: 'prev-mismatch' }, 'the next record no longer links');
  assert.deepEqual(rep.signatures, { ok: false, checked: 29, first_bad_seq: 30, reason: 'unknown-key' });
  // When the other key is known too (e.g. retired), a seq range catches it.
  const ranged = keySet([
    createVerifier('ed25519', signer.publicKey),
    { verifier: createVerifier('ed25519', mallory.publicKey), first_seq: 1, last_seq: 10 },
  ]);
  rep = verify(swapped, ranged);
  assert.deepEqual(rep.signatures, { ok: false, checked: 29, first_bad_seq: 30, reason: 'key-out-of-range' });
  // Replacing the last record: only the head notices on the chain side.
  const tailSwap = clone();
  tailSwap[39] = sealBatch(headOf(chain.slice(0, 39)), TENANT, [draft(40)], mallory)[0]!;
  rep = verify(tailSwap);
  assert.deepEqual(rep.chain, { ok: false, checked: 39, break_at: 40, reason: 'hash-mismatch' });
  assert.equal(rep.signatures.reason, 'unknown-key');
});

test('rewriting history without the signing key: the chain recomputes, the signatures do not', () => {
  const recs = clone();
  recs[4]!.actor = 'user:someone-else';
  // Recompute every hash from seq 5 on, as a forger with database access but no key would.
  for (let i = 4; i < recs.length; i++) {
    const r = recs[i]!;
    if (i > 4) r.prev_hash = recs[i - 1]!.hash;
    const commitment = metaCommitment(Buffer.from(r.meta_blind!, 'hex'), r.meta!);
    r.meta_commitment = commitment.toString('hex');
    r.hash = recordHash(
      r,
      commitment,
      r.payload_hash === null ? null : Buffer.from(r.payload_hash, 'hex'),
      Buffer.from(r.prev_hash, 'hex'),
    ).toString('hex');
  }
  const rep = verifyRecords(recs, { keys, tenant: TENANT, head: headOf(recs) });
  assert.equal(rep.chain.ok, true);
  assert.deepEqual(rep.signatures, { ok: false, checked: 4, first_bad_seq: 5, reason: 'sig-invalid' });
  assert.equal(rep.checkpoints.status, 'failed', 'the next checkpoint attests the old head');
  assert.equal(rep.checkpoints.first_bad_seq, 10);
  assert.equal(rep.checkpoints.reason, 'checkpoint-link-mismatch');
  // A forger re-signing with their own key is caught as unknown-key.
  const mallory = newSigner();
  for (const r of recs) {
    r.sig = mallory.sign(eventSigPreimage(TENANT, r.seq, r.hash)).toString('base64');
    r.key_id = mallory.keyId;
  }
  assert.equal(verifyRecords(recs, { keys, tenant: TENANT }).signatures.reason, 'unknown-key');
});
