/**
 * Micro-benchmark of the ledger's pure crypto path: `node dist/bench/ledger-crypto.js [--n 20000] [--threads 2]`.
 * Baselines measured in the same run: raw node:crypto Ed25519 sign/verify on one thread and on the
 * worker threads; then sealing (hash here + sign in the pool) and verification (chain-only and full,
 * in-thread and in pool chunks), each with its ratio to the matching raw rate. Prints one JSON object.
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { loadavg, cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { applySignatures, hashBatch, sealBatch, type ChainTail } from '../src/ledger/chain.js';
import { checkpointDraft } from '../src/ledger/checkpoint.js';
import { keySet, keySpecs } from '../src/ledger/keyset.js';
import type { AuditDraft, AuditRecord } from '../src/ledger/record.js';
import { createSigner, createVerifier, privateKeyPem } from '../src/ledger/signers.js';
import { mergeChunks, verifyRecords, type ChainAnchor } from '../src/ledger/verify.js';
import { createWorkerPool } from '../src/workers/pool.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '20000' }, threads: { type: 'string', default: '2' } } });
const N = Number(values.n);
const THREADS = Number(values.threads);
const TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';

const rate = (count: number, ms: number): number => Math.round((count * 1000) / ms);
function timed<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const out = fn();
  return [out, performance.now() - t0];
}
async function timedAsync<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
}

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const msg = Buffer.alloc(94, 7);
const sig = sign(null, msg, privateKey);
const [, rawSignMs] = timed(() => { for (let i = 0; i < N / 4; i++) sign(null, msg, privateKey); });
const [, rawVerifyMs] = timed(() => { for (let i = 0; i < N / 4; i++) verify(null, msg, publicKey, sig); });
const rawSign1 = rate(N / 4, rawSignMs);
const rawVerify1 = rate(N / 4, rawVerifyMs);

const signer = createSigner('ed25519', privateKey);
const keys = keySet([createVerifier('ed25519', publicKey)]);
const pool = createWorkerPool({
  threads: THREADS,
  signingKeys: [{ key_id: signer.keyId, algorithm: 'ed25519', pem: privateKeyPem(privateKey) }],
});

const BATCH = 256;
const drafts: AuditDraft[] = Array.from({ length: BATCH }, (_, i) => ({
  actor: `user:${i % 13}`,
  actor_kind: 'user',
  action: 'agent.create',
  target_kind: 'agent',
  target_id: `a-${i}`,
  meta: { i, name: `agent ${i}` },
}));

// Raw sign rate on all worker threads: sign-batch jobs over fixed hashes (no hashing, no records).
const hashes = Buffer.alloc(32 * BATCH, 1);
await pool.signBatch({ keyId: signer.keyId, tenant: TENANT, firstSeq: 1, hashes }); // warm the workers
const [, poolSignMs] = await timedAsync(async () => {
  const jobs = [];
  for (let done = 0; done < N; done += BATCH)
    jobs.push(pool.signBatch({ keyId: signer.keyId, tenant: TENANT, firstSeq: done + 1, hashes }));
  await Promise.all(jobs);
});
const rawSignPool = rate(N, poolSignMs);

// Sealing: one chain, hash on this thread, sign in the pool, two batches in flight.
const [, sealInThreadMs] = timed(() => {
  let tail: ChainTail | null = null;
  for (let done = 0; done < N / 4; done += BATCH) {
    const recs = sealBatch(tail, TENANT, drafts, signer);
    const last = recs[recs.length - 1] as AuditRecord;
    tail = { seq: last.seq, hash: last.hash };
  }
});
const chain: AuditRecord[] = [];
const [, sealPoolMs] = await timedAsync(async () => {
  let tail: ChainTail | null = null;
  const inflight: Promise<void>[] = [];
  for (let done = 0; done < N; done += BATCH) {
    const batchDrafts = done > 0 && (done / BATCH) % 40 === 0 ? [checkpointDraft(), ...drafts.slice(1)] : drafts;
    const hashed = hashBatch(tail, TENANT, batchDrafts, signer);
    tail = hashed.tail;
    inflight.push(
      pool.signBatch({ keyId: signer.keyId, tenant: TENANT, firstSeq: hashed.firstSeq, hashes: hashed.hashes }).then((r) => {
        applySignatures(hashed, { sigLength: r.sigLength, sigs: Buffer.from(r.sigs) });
      }),
    );
    chain.push(...hashed.records);
    if (inflight.length >= THREADS * 2) await inflight.shift();
  }
  await Promise.all(inflight);
});

// Verification.
const head = { seq: chain.length, hash: (chain[chain.length - 1] as AuditRecord).hash };
const [fastReport, chainMs] = timed(() => verifyRecords(chain, { keys, head, signatures: false }));
const [fullReport, fullMs] = timed(() => verifyRecords(chain.slice(0, N / 4), { keys, signatures: true }));
async function poolVerify(signatures: boolean): Promise<boolean> {
  const specs = keySpecs(keys);
  const CHUNK = 4096;
  const jobs = [];
  for (let off = 0; off < chain.length; off += CHUNK) {
    const prev = chain[off - 1];
    const anchor: ChainAnchor | null = prev === undefined ? null : { seq: prev.seq, hash: prev.hash };
    jobs.push(
      pool.verifyChunk({
        records: chain.slice(off, off + CHUNK),
        tenant: TENANT,
        firstSeq: off + 1,
        anchor,
        head,
        signatures,
        keys: specs,
      }),
    );
  }
  const reports = (await Promise.all(jobs)).map((r) => r.report);
  return mergeChunks(reports, { from: 1, head, resolve: (s) => chain[s - 1]?.hash }).ok;
}
const [poolChainOk, poolChainMs] = await timedAsync(() => poolVerify(false));
const [poolFullOk, poolFullMs] = await timedAsync(() => poolVerify(true));
await pool.close();

const out = {
  records: N,
  threads: THREADS,
  cpu: cpus()[0]?.model,
  loadavg: loadavg(),
  raw: { ed25519_sign_per_s_1thread: rawSign1, ed25519_verify_per_s_1thread: rawVerify1, ed25519_sign_per_s_pool: rawSignPool },
  seal: {
    in_thread_per_s: rate(N / 4, sealInThreadMs),
    hash_here_sign_in_pool_per_s: rate(N, sealPoolMs),
    ratio_to_raw_pool_sign: +(rate(N, sealPoolMs) / rawSignPool).toFixed(2),
  },
  verify: {
    chain_checkpoints_in_thread_per_s: rate(N, chainMs),
    full_in_thread_per_s: rate(N / 4, fullMs),
    full_in_thread_ratio_to_raw_verify: +(rate(N / 4, fullMs) / rawVerify1).toFixed(2),
    chain_checkpoints_pool_per_s: rate(N, poolChainMs),
    full_pool_per_s: rate(N, poolFullMs),
    ok: fastReport.ok && fullReport.ok && poolChainOk && poolFullOk,
  },
};
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
