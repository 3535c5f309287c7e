import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keyring, KeyringError, publishedKeySet } from '../../src/ledger/keyring.js';
import { generateKey, keyIdOf, parsePublicKey, privateKeyPem } from '../../src/ledger/signers.js';
import { verifyRecords } from '../../src/ledger/verify.js';
import { OTHER_TENANT, TENANT, buildChain, headOf } from './fixtures.js';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-keyring-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('first open mints an Ed25519 key, 0600, and reopening loads the same key', async (t) => {
  const dataDir = await tempDir(t);
  const ring = await Keyring.open({ dataDir, env: {} });
  assert.equal(ring.active.algorithm, 'ed25519');
  const keyFile = join(dataDir, 'audit-keys', `${ring.active.keyId}.pem`);
  assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
  assert.equal((await stat(join(dataDir, 'audit-keys'))).mode & 0o777, 0o700);
  assert.match(await readFile(keyFile, 'utf8'), /BEGIN PRIVATE KEY/);
  const again = await Keyring.open({ dataDir, env: {} });
  assert.equal(again.active.keyId, ring.active.keyId);
  const files = await readdir(join(dataDir, 'audit-keys'));
  assert.deepEqual(files.sort(), [`${ring.active.keyId}.pem`, 'keyring.json'].sort(), 'no temp files left behind');
});

test('a private key file readable by group or world is refused', async (t) => {
  const dataDir = await tempDir(t);
  const ring = await Keyring.open({ dataDir, env: {} });
  const keyFile = join(dataDir, 'audit-keys', `${ring.active.keyId}.pem`);
  for (const mode of [0o640, 0o604, 0o660]) {
    await chmod(keyFile, mode);
    await assert.rejects(Keyring.open({ dataDir, env: {} }), KeyringError);
  }
  await chmod(keyFile, 0o400);
  assert.equal((await Keyring.open({ dataDir, env: {} })).active.keyId, ring.active.keyId);
});

test('SERVICE_AUDIT_KEY_ALG picks the algorithm of a minted key', async (t) => {
  const dataDir = await tempDir(t);
  const ring = await Keyring.open({ dataDir, env: { SERVICE_AUDIT_KEY_ALG: 'ecdsa-p256-sha256' } });
  assert.equal(ring.active.algorithm, 'ecdsa-p256-sha256');
  await assert.rejects(Keyring.open({ dataDir: await tempDir(t), env: { SERVICE_AUDIT_KEY_ALG: 'dsa' } }), /unknown algorithm/);
});

test('a key supplied by SERVICE_AUDIT_KEY_FILE is used in place, not copied', async (t) => {
  const dataDir = await tempDir(t);
  const { privateKey, publicKey } = generateKey('rsa-pss-sha256', 2048);
  const keyFile = join(dataDir, 'supplied.pem');
  await writeFile(keyFile, privateKeyPem(privateKey), { mode: 0o600 });
  const env = { SERVICE_AUDIT_KEY_FILE: keyFile, SERVICE_AUDIT_KEY_ALG: 'rsa-pss-sha256' };
  const ring = await Keyring.open({ dataDir, env });
  assert.equal(ring.active.algorithm, 'rsa-pss-sha256');
  assert.equal(ring.active.keyId, keyIdOf(publicKey));
  assert.deepEqual(await readdir(join(dataDir, 'audit-keys')), ['keyring.json']);
  assert.equal((await Keyring.open({ dataDir, env })).active.keyId, ring.active.keyId);
  await chmod(keyFile, 0o644);
  await assert.rejects(Keyring.open({ dataDir, env }), /chmod 600/);
});

test('replacing the active key by a supplied file requires the chain heads, and retires the old key', async (t) => {
  const dataDir = await tempDir(t);
  const first = await Keyring.open({ dataDir, env: {} });
  const { privateKey } = generateKey('ecdsa-p384-sha384');
  const keyFile = join(dataDir, 'new.pem');
  await writeFile(keyFile, privateKeyPem(privateKey), { mode: 0o600 });
  await assert.rejects(Keyring.open({ dataDir, keyFile, env: {} }), /chain heads/);
  const ring = await Keyring.open({ dataDir, keyFile, env: {}, chainHeads: async () => new Map([[TENANT, 7]]) });
  assert.equal(ring.active.algorithm, 'ecdsa-p384-sha384');
  const pub = ring.publishedKeys(TENANT).keys;
  assert.deepEqual(pub.map((k) => [k.key_id, k.first_seq, k.last_seq]), [[first.active.keyId, 1, 7], [ring.active.keyId, 8, undefined]]);
});

test('rotation: old key retired at each chain head, new key from head + 1, both published with ranges', async (t) => {
  const dataDir = await tempDir(t);
  const ring = await Keyring.open({ dataDir, env: {} });
  const oldSigner = ring.active;
  const a = buildChain(oldSigner, 12, { tenant: TENANT });
  const b = buildChain(oldSigner, 3, { tenant: OTHER_TENANT });
  const next = await ring.rotate(new Map([[TENANT, 12], [OTHER_TENANT, 3]]));
  assert.notEqual(next.keyId, oldSigner.keyId);
  assert.equal(ring.active.keyId, next.keyId);
  const a2 = a.concat(buildChain(next, 5, { tenant: TENANT, tail: headOf(a) }));

  const published = ring.publishedKeys(TENANT);
  assert.equal(published.keys.length, 2);
  const [old, cur] = published.keys;
  assert.deepEqual({ ...old, pem: undefined }, {
    key_id: oldSigner.keyId, algorithm: 'ed25519', public_key: old!.public_key, pem: undefined, first_seq: 1, last_seq: 12,
  });
  assert.equal(Buffer.from(old!.public_key, 'base64').length, 32);
  assert.equal(keyIdOf(parsePublicKey('ed25519', old!.pem)), oldSigner.keyId);
  assert.equal(cur!.first_seq, 13);
  assert.equal('last_seq' in cur!, false, 'the active key has no last_seq');
  assert.equal(ring.publishedKeys(OTHER_TENANT).keys[1]!.first_seq, 4);
  // A chain created after the rotation never saw the old key.
  assert.deepEqual(ring.publishedKeys('01970c2e-4b1a-7c3d-8e4f-000000000099').keys.map((k) => [k.key_id, k.first_seq]), [[next.keyId, 1]]);

  // The published list is exactly what an auditor needs to verify the rotated chain.
  assert.equal(verifyRecords(a2, { keys: publishedKeySet(published.keys), head: headOf(a2) }).ok, true);
  assert.equal(verifyRecords(a2, { keys: ring.keySet(TENANT) }).ok, true);
  assert.equal(verifyRecords(b, { keys: ring.keySet(OTHER_TENANT) }).ok, true);

  // The rotation survives a restart; the new private key is 0600 and loads.
  const reopened = await Keyring.open({ dataDir, env: {} });
  assert.equal(reopened.active.keyId, next.keyId);
  assert.deepEqual(reopened.publishedKeys(TENANT), published);
  assert.equal((await stat(join(dataDir, 'audit-keys', `${next.keyId}.pem`))).mode & 0o777, 0o600);
  const json = JSON.parse(await readFile(join(dataDir, 'audit-keys', 'keyring.json'), 'utf8')) as {
    active: string;
    keys: { retired_at?: string }[];
  };
  assert.equal(json.active, next.keyId);
  assert.ok(json.keys[0]!.retired_at);
  assert.equal(JSON.stringify(json).includes('PRIVATE'), false, 'keyring.json holds no private key');

  // A second rotation keeps the first key's range.
  const third = await ring.rotate(new Map([[TENANT, 17]]));
  assert.deepEqual(ring.publishedKeys(TENANT).keys.map((k) => [k.key_id, k.first_seq, k.last_seq]), [
    [oldSigner.keyId, 1, 12], [next.keyId, 13, 17], [third.keyId, 18, undefined],
  ]);
});

test('signingKey() hands the worker pool the active key material', async (t) => {
  const ring = await Keyring.open({ dataDir: await tempDir(t), env: {} });
  const m = ring.signingKey();
  assert.equal(m.key_id, ring.active.keyId);
  assert.match(m.pem, /BEGIN PRIVATE KEY/);
});
