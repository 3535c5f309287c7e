#!/usr/bin/env node
// Regenerates test/vectors/ledger-v1.json from fixed inputs (fixed Ed25519 seed, blinds, ids, times).
// Usage: npx tsc -p tsconfig.json && node scripts/gen-vectors.mjs [--check]
// With --check it exits 1 when the committed file differs from what the current code produces.
import { createPrivateKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const lib = (p) => import(new URL(`dist/src/ledger/${p}`, root).href);
const { sealBatch } = await lib('chain.js');
const { checkpointDraft } = await lib('checkpoint.js');
const { createSigner, publicKeyBytes } = await lib('signers.js');
const { recordPreimage, metaCommitmentPreimage, eventSigPreimage, checkpointSigPreimage } = await lib('preimage.js');

const SEED_HEX = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'; // RFC 8032 §7.1 TEST 1 secret key
const TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';
// RFC 8410 §10.3: PKCS#8 of an Ed25519 key is this prefix followed by the 32-byte seed.
const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(SEED_HEX, 'hex')]);
const signer = createSigner('ed25519', createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }));

const drafts = [
  {
    actor: 'system',
    actor_kind: 'system',
    action: 'org.create',
    target_kind: 'tenant',
    target_id: TENANT,
    occurred_at: '2026-06-02T10:00:00.000000000Z',
    meta: { name: 'Acme', region: 'eu' },
  },
  {
    actor: 'user:01970c2e-4b1a-7000-8000-000000000001',
    actor_kind: 'user',
    action: 'agent.create',
    target_kind: 'agent',
    target_id: '01970c2e-4b1a-7000-8000-0000000000a1',
    occurred_at: '2026-06-02T10:00:01.123456789Z',
    payload_hash: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
    meta: {
      zeta: 'Ωmega €',
      numbers: [1e21, 0.1, -0, 1.5e-7, 100],
      nested: { b: 1, a: { d: true, c: null } },
      '\u00e9': 'é',
      '\u0080': 'ctrl',
    },
  },
  {
    actor: 'token:01970c2e-4b1a-7000-8000-0000000000b2',
    actor_kind: 'token',
    action: 'audit.read',
    target_kind: '',
    target_id: '',
    occurred_at: '2026-06-02T10:00:02.000000001Z',
  },
  checkpointDraft('2026-06-02T10:00:03.000000000Z'),
];
// Blind i is 32 bytes of value i+1; ids are fixed.
const blinds = (out) => { for (let i = 0; i < out.length; i++) out[i] = Math.floor(i / 32) + 1; };
const ids = ['01970c2e-4b1a-7001-8000-000000000101', '01970c2e-4b1a-7002-8000-000000000102',
  '01970c2e-4b1a-7003-8000-000000000103', '01970c2e-4b1a-7004-8000-000000000104'];
let n = 0;
const records = sealBatch(null, TENANT, drafts, signer, { fillBlinds: blinds, newId: () => ids[n++] });

const vectors = records.map((r, i) => {
  const input = { ...drafts[i] };
  const fields = { tenant: r.tenant, seq: r.seq, occurred_at: r.occurred_at, actor: r.actor, actor_kind: r.actor_kind,
    action: r.action, target_kind: r.target_kind, target_id: r.target_id };
  const v = {
    description: i === 3 ? 'checkpoint attesting seq 3' : `record seq ${r.seq}`,
    input,
    meta_canonical: r.meta,
    meta_commitment_preimage_hex: metaCommitmentPreimage(Buffer.from(r.meta_blind, 'hex'), r.meta).toString('hex'),
    record_preimage_hex: recordPreimage(fields, Buffer.from(r.meta_commitment, 'hex'),
      r.payload_hash === null ? null : Buffer.from(r.payload_hash, 'hex'), Buffer.from(r.prev_hash, 'hex')).toString('hex'),
    event_sig_preimage_hex: eventSigPreimage(r.tenant, r.seq, r.hash).toString('hex'),
    record: r,
  };
  if (r.action === 'audit.checkpoint') {
    const m = JSON.parse(r.meta);
    v.checkpoint_sig_preimage_hex = checkpointSigPreimage(r.tenant, m.attested_seq, m.head_hash).toString('hex');
  }
  return v;
});
// The same seq-2 record after erasure of its meta: blind and meta gone, commitment kept; still verifies.
const erased = { ...records[1], meta: null, meta_blind: null };

const out = {
  format: 'svc.audit.v1',
  note: 'Golden vectors for the svc audit ledger; see test/vectors/README.md and docs/audit-verification.md.',
  key: {
    algorithm: 'ed25519',
    seed_hex: SEED_HEX,
    public_key: publicKeyBytes('ed25519', signer.publicKey).toString('base64'),
    key_id: signer.keyId,
  },
  tenant: TENANT,
  records: vectors,
  erased_record: erased,
  head: { seq: records.at(-1).seq, hash: records.at(-1).hash },
};
const text = `${JSON.stringify(out, null, 2)}\n`;
const target = fileURLToPath(new URL('test/vectors/ledger-v1.json', root));
if (process.argv.includes('--check')) {
  const same = readFileSync(target, 'utf8') === text;
  process.stdout.write(same ? 'vectors up to date\n' : 'vectors differ from the code\n');
  process.exit(same ? 0 : 1);
}
writeFileSync(target, text);
process.stdout.write(`wrote ${target}\n`);
