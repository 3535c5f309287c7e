import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CHECKPOINT_ACTION } from '../../src/ledger/checkpoint.js';
import { canonicalMeta } from '../../src/ledger/canonical-json.js';
import { randomBytes } from 'node:crypto';
import { checkpointSigPreimage, eventSigPreimage, metaCommitment, recordHash } from '../../src/ledger/preimage.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { verifyRecords } from '../../src/ledger/verify.js';
import { StreamVerifier } from '../../src/ledger/verify-stream.js';
import { createWorkerPool } from '../../src/workers/pool.js';
import { buildChain, headOf, newSigner, trust, TENANT } from './fixtures.js';

const signer = newSigner('ed25519');
const keys = trust(signer);
const chain = buildChain(signer, 240, { checkpointEvery: 25 });

type Tamper = (rs: AuditRecord[]) => AuditRecord[];
const tampers: Array<[string, Tamper]> = [
  ['none', (rs) => rs],
  ['actor edited', (rs) => rs.map((r, i) => (i === 101 ? { ...r, actor: 'user:mallory' } : r))],
  ['record dropped', (rs) => rs.filter((_, i) => i !== 64)],
  ['tail cut', (rs) => rs.slice(0, 200)],
  ['sig swapped', (rs) => rs.map((r, i) => (i === 30 ? { ...r, sig: (rs[31] as AuditRecord).sig } : r))],
  ['prev broken', (rs) => rs.map((r, i) => (i === 177 ? { ...r, prev_hash: 'ab'.repeat(32) } : r))],
];

async function streamed(
  records: readonly AuditRecord[],
  chunkSize: number,
  pool: ReturnType<typeof createWorkerPool> | null,
  head: ReturnType<typeof headOf>,
) {
  const v = new StreamVerifier({ keys, chunkSize, pool });
  for (const r of records) await v.add(r);
  return v.finish(head);
}

test('streamed verification in chunks, in-thread or over the pool, gives the verdict of verifyRecords', async (t) => {
  const pool = createWorkerPool({ threads: 2 });
  t.after(() => pool.close());
  const head = headOf(chain);
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...tampers), fc.integer({ min: 1, max: 70 }), fc.boolean(), async ([, tamper], chunkSize, usePool) => {
      const records = tamper(chain.map((r) => ({ ...r })));
      const expected = verifyRecords(records, { keys, head });
      assert.deepEqual(await streamed(records, chunkSize, usePool ? pool : null, head), expected);
    }),
    { numRuns: 60 },
  );
});

/** A checkpoint record attesting `attested` (any earlier record), sealed and signed by hand after `tail`. */
function farCheckpoint(tail: AuditRecord, attested: AuditRecord, headHash = attested.hash): AuditRecord {
  const meta = canonicalMeta({
    attested_seq: attested.seq,
    head_hash: headHash,
    checkpoint_sig: signer.sign(checkpointSigPreimage(TENANT, attested.seq, headHash)).toString('base64'),
    key_id: signer.keyId,
  });
  const blind = randomBytes(32);
  const commitment = metaCommitment(blind, meta);
  const fields = {
    tenant: TENANT,
    seq: tail.seq + 1,
    occurred_at: tail.occurred_at,
    actor: 'system',
    actor_kind: 'system',
    action: CHECKPOINT_ACTION,
    target_kind: 'audit.chain',
    target_id: '',
  };
  const hash = recordHash(fields, commitment, null, Buffer.from(tail.hash, 'hex'));
  return {
    id: tail.id,
    ...fields,
    meta,
    meta_blind: blind.toString('hex'),
    meta_commitment: commitment.toString('hex'),
    payload_hash: null,
    prev_hash: tail.hash,
    hash: hash.toString('hex'),
    sig: signer.sign(eventSigPreimage(TENANT, fields.seq, hash)).toString('base64'),
    key_id: signer.keyId,
  };
}

test('a checkpoint attesting a record before its chunk is resolved through the source; a wrong attestation is caught', async () => {
  const base = chain.slice(0, 100);
  const tail = base[99] as AuditRecord;
  for (const [headHash, ok] of [[(base[9] as AuditRecord).hash, true], ['cd'.repeat(32), false]] as const) {
    const records = [...base, farCheckpoint(tail, base[9] as AuditRecord, headHash)];
    assert.equal(verifyRecords(records, { keys }).ok, ok, 'the reference verdict');
    const v = new StreamVerifier({ keys, chunkSize: 16 });
    for (const r of records) await v.add(r);
    let asked: number[] = [];
    const report = await v.finish(null, async (seqs) => {
      asked = seqs;
      return new Map(seqs.map((s) => [s, (records[s - 1] as AuditRecord).hash]));
    });
    assert.deepEqual(asked, [10], 'seq 10 lies before the checkpoint\'s chunk and anchor: fetched again');
    assert.deepEqual(report, verifyRecords(records, { keys }));
    if (!ok) assert.deepEqual([report.checkpoints.reason, report.checkpoints.first_bad_seq], ['checkpoint-link-mismatch', 101]);
  }
});
