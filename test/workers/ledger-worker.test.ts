/** The real ledger worker: signatures and chunk verification made in the pool equal the in-thread results. */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { applySignatures, hashBatch, signHashes } from '../../src/ledger/chain.js';
import { keySpecs } from '../../src/ledger/keyset.js';
import { generateKey, createSigner, privateKeyPem } from '../../src/ledger/signers.js';
import { mergeChunks, verifyRecords } from '../../src/ledger/verify.js';
import type { ChainAnchor } from '../../src/ledger/verify.js';
import { createWorkerPool } from '../../src/workers/pool.js';
import { TENANT, buildChain, draft, headOf, trust } from '../ledger/fixtures.js';

const ed = generateKey('ed25519').privateKey;
const p256 = generateKey('ecdsa-p256-sha256').privateKey;
const edSigner = createSigner('ed25519', ed);
const pSigner = createSigner('ecdsa-p256-sha256', p256);
const pool = createWorkerPool({
  threads: 2,
  signingKeys: [
    { key_id: edSigner.keyId, algorithm: 'ed25519', pem: privateKeyPem(ed) },
    { key_id: pSigner.keyId, algorithm: 'ecdsa-p256-sha256', pem: privateKeyPem(p256) },
  ],
});
after(() => pool.close());

test('a batch hashed here and signed in the pool verifies, and equals in-thread signing (Ed25519)', async () => {
  const prior = buildChain(edSigner, 10);
  const hashed = hashBatch(headOf(prior), TENANT, Array.from({ length: 100 }, (_, i) => draft(i)), edSigner);
  const res = await pool.signBatch({ keyId: edSigner.keyId, tenant: TENANT, firstSeq: hashed.firstSeq, hashes: hashed.hashes });
  assert.equal(res.sigLength, 64);
  const local = signHashes(edSigner, TENANT, hashed.firstSeq, hashed.hashes);
  assert.deepEqual(Buffer.from(res.sigs), local.sigs, 'deterministic Ed25519: same bytes from the worker');
  const recs = applySignatures(hashed, { sigLength: res.sigLength, sigs: Buffer.from(res.sigs) });
  assert.equal(verifyRecords(prior.concat(recs), { keys: trust(edSigner) }).ok, true);
});

test('the pool signs with whichever key the job names (ECDSA P-256)', async () => {
  const hashed = hashBatch(null, TENANT, [draft(1), draft(2)], pSigner);
  const res = await pool.signBatch({ keyId: pSigner.keyId, tenant: TENANT, firstSeq: 1, hashes: hashed.hashes });
  assert.equal(res.sigLength, 64);
  const recs = applySignatures(hashed, { sigLength: res.sigLength, sigs: Buffer.from(res.sigs) });
  assert.equal(verifyRecords(recs, { keys: trust(pSigner) }).ok, true);
  await assert.rejects(pool.signBatch({ keyId: 'ff'.repeat(16), tenant: TENANT, firstSeq: 1, hashes: hashed.hashes }), /no signing key/);
});

/** Verify a chain in pool chunks, the way the server's verify route does, and merge. */
async function verifyInPool(records: ReturnType<typeof buildChain>, chunk: number, signatures: boolean, head: ChainAnchor | null) {
  const keys = keySpecs(trust(edSigner));
  const jobs = [];
  for (let off = 0; off < records.length; off += chunk) {
    const part = records.slice(off, off + chunk);
    const prev = records[off - 1];
    const anchor: ChainAnchor | null = prev === undefined ? null : { seq: prev.seq, hash: prev.hash };
    jobs.push(pool.verifyChunk({ records: part, tenant: TENANT, firstSeq: off + 1, anchor, head, signatures, keys }));
  }
  const reports = (await Promise.all(jobs)).map((r) => r.report);
  return mergeChunks(reports, { from: 1, head, resolve: (s) => records[s - 1]?.hash });
}

test('chunks verified in parallel in the pool merge to the in-thread report', async () => {
  const chain = buildChain(edSigner, 300, { checkpointEvery: 40 });
  const head = headOf(chain);
  for (const signatures of [true, false]) {
    const inThread = verifyRecords(chain, { keys: trust(edSigner), head, signatures });
    assert.equal(inThread.ok, true);
    assert.deepEqual(await verifyInPool(chain, 64, signatures, head), inThread);
  }
  const tampered = chain.map((r) => ({ ...r }));
  tampered[150]!.target_id = 'agent-x';
  tampered[200]!.sig = tampered[201]!.sig;
  const expected = verifyRecords(tampered, { keys: trust(edSigner), head });
  assert.deepEqual(expected.chain, { ok: false, checked: 150, break_at: 151, reason: 'hash-mismatch' });
  assert.equal(expected.signatures.first_bad_seq, 201);
  assert.deepEqual(await verifyInPool(tampered, 64, true, head), expected);
});
