import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify as cryptoVerify, constants } from 'node:crypto';
import {
  SIGNATURE_ALGORITHMS,
  createSigner,
  createVerifier,
  generateKey,
  inferAlgorithm,
  keyIdOf,
  parsePinnedKey,
  parsePublicKey,
  privateKeyPem,
  publicKeyBytes,
  publicKeyPem,
  spkiDer,
  type SignatureAlgorithm,
} from '../../src/ledger/signers.js';

const keys = new Map(SIGNATURE_ALGORITHMS.map((alg) => [alg, generateKey(alg, 2048)] as const));
const msg = Buffer.from('svc ledger signer test');

test('every algorithm signs and verifies, and rejects a changed message or signature', () => {
  for (const alg of SIGNATURE_ALGORITHMS) {
    const { privateKey, publicKey } = keys.get(alg)!;
    const s = createSigner(alg, privateKeyPem(privateKey));
    const v = createVerifier(alg, publicKey);
    const sig = s.sign(msg);
    assert.equal(s.keyId, v.keyId, alg);
    assert.ok(v.verify(msg, sig), alg);
    assert.equal(v.verify(Buffer.from('other'), sig), false, alg);
    const bad = Buffer.from(sig);
    bad[bad.length >> 1] = (bad[bad.length >> 1] as number) ^ 1;
    assert.equal(v.verify(msg, bad), false, alg);
    assert.equal(v.verify(msg, Buffer.alloc(0)), false, `${alg}: empty signature is just invalid`);
    assert.equal(v.verify(msg, Buffer.alloc(3)), false, `${alg}: garbage signature is just invalid`);
  }
});

test('ECDSA signatures are IEEE P1363 (r ‖ s, fixed length), not DER', () => {
  for (const [alg, len, digest] of [['ecdsa-p256-sha256', 64, 'sha256'], ['ecdsa-p384-sha384', 96, 'sha384']] as const) {
    const { privateKey, publicKey } = keys.get(alg)!;
    const s = createSigner(alg, privateKey);
    for (let i = 0; i < 20; i++) {
      const sig = s.sign(Buffer.from([i]));
      assert.equal(sig.length, len, alg);
      assert.ok(cryptoVerify(digest, Buffer.from([i]), { key: publicKey, dsaEncoding: 'ieee-p1363' }, sig));
      let asDer: boolean;
      try {
        asDer = cryptoVerify(digest, Buffer.from([i]), { key: publicKey, dsaEncoding: 'der' }, sig);
      } catch {
        asDer = false;
      }
      assert.equal(asDer, false, 'the same bytes are not a DER signature');
    }
  }
});

test('RSA padding is pinned: PKCS#1 v1.5 and PSS(SHA-256, salt 32) are not interchangeable', () => {
  const { privateKey, publicKey } = keys.get('rsa-pss-sha256')!;
  const pss = createSigner('rsa-pss-sha256', privateKey).sign(msg);
  const pkcs1 = createSigner('rsa-pkcs1-sha256', privateKey).sign(msg);
  assert.ok(cryptoVerify('sha256', msg, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, pss));
  assert.equal(cryptoVerify('sha256', msg, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 20 }, pss), false);
  assert.ok(cryptoVerify('sha256', msg, { key: publicKey, padding: constants.RSA_PKCS1_PADDING }, pkcs1));
  assert.equal(createVerifier('rsa-pkcs1-sha256', publicKey).verify(msg, pss), false);
  assert.equal(createVerifier('rsa-pss-sha256', publicKey).verify(msg, pkcs1), false);
  assert.equal(pss.length, 256);
});

test('key_id is the first 16 bytes of SHA-256(SPKI DER), as hex', () => {
  for (const alg of SIGNATURE_ALGORITHMS) {
    const { publicKey } = keys.get(alg)!;
    const der = publicKey.export({ type: 'spki', format: 'der' });
    assert.equal(keyIdOf(publicKey), createHash('sha256').update(der).digest('hex').slice(0, 32));
    assert.match(keyIdOf(publicKey), /^[0-9a-f]{32}$/);
  }
});

test('published public key: Ed25519 raw 32 bytes, others SPKI DER; both parse back to the same key', () => {
  for (const alg of SIGNATURE_ALGORITHMS) {
    const { publicKey } = keys.get(alg)!;
    const bytes = publicKeyBytes(alg, publicKey);
    if (alg === 'ed25519') {
      assert.equal(bytes.length, 32);
      assert.deepEqual(bytes, Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url'));
    } else {
      assert.deepEqual(bytes, spkiDer(publicKey));
    }
    const back = parsePublicKey(alg, bytes.toString('base64'));
    assert.equal(keyIdOf(back), keyIdOf(publicKey));
    assert.equal(keyIdOf(parsePublicKey(alg, publicKeyPem(publicKey))), keyIdOf(publicKey));
    assert.equal(keyIdOf(parsePublicKey(alg, spkiDer(publicKey).toString('base64'))), keyIdOf(publicKey));
  }
});

test('auditor-pinned keys: bare base64 with a default algorithm, or <alg>:<base64>', () => {
  const ed = keys.get('ed25519')!;
  const p256 = keys.get('ecdsa-p256-sha256')!;
  const edB64 = publicKeyBytes('ed25519', ed.publicKey).toString('base64');
  const pB64 = publicKeyBytes('ecdsa-p256-sha256', p256.publicKey).toString('base64');
  const bare = parsePinnedKey(edB64);
  assert.equal(bare.algorithm, 'ed25519');
  assert.equal(bare.keyId, keyIdOf(ed.publicKey));
  const prefixed = parsePinnedKey(`ecdsa-p256-sha256:${pB64}`);
  assert.equal(prefixed.algorithm, 'ecdsa-p256-sha256');
  assert.ok(prefixed.verify(msg, createSigner('ecdsa-p256-sha256', p256.privateKey).sign(msg)));
  assert.equal(parsePinnedKey(pB64, 'ecdsa-p256-sha256').keyId, keyIdOf(p256.publicKey));
  assert.throws(() => parsePinnedKey(`ed448:${edB64}`), /unknown public key algorithm/);
  assert.throws(() => parsePinnedKey(`ecdsa-p384-sha384:${pB64}`), /does not fit/);
  assert.throws(() => parsePinnedKey(pB64), /does not fit|ed25519/, 'a P-256 key is not an Ed25519 key');
  assert.throws(() => parsePinnedKey('not base64!'), /base64/);
});

test('keys that do not fit the algorithm, and short RSA keys, are refused', () => {
  const ed = keys.get('ed25519')!;
  assert.throws(() => createSigner('ecdsa-p256-sha256', ed.privateKey), /does not fit/);
  assert.throws(() => createVerifier('rsa-pkcs1-sha256', ed.publicKey), /does not fit/);
  const small = generateKey('rsa-pkcs1-sha256', 1024);
  assert.throws(() => createSigner('rsa-pkcs1-sha256', small.privateKey), /2048/);
  assert.throws(() => createSigner('ed25519', ed.publicKey), /private key/);
});

test('inferAlgorithm reads the key type', () => {
  const expect: Record<SignatureAlgorithm, SignatureAlgorithm> = {
    ed25519: 'ed25519',
    'ecdsa-p256-sha256': 'ecdsa-p256-sha256',
    'ecdsa-p384-sha384': 'ecdsa-p384-sha384',
    'rsa-pkcs1-sha256': 'rsa-pkcs1-sha256',
    'rsa-pss-sha256': 'rsa-pkcs1-sha256',
  };
  for (const alg of SIGNATURE_ALGORITHMS) assert.equal(inferAlgorithm(keys.get(alg)!.privateKey), expect[alg]);
  assert.equal(inferAlgorithm(createPublicKey(keys.get('ed25519')!.privateKey)), 'ed25519');
});

test('private keys export as PKCS#8 PEM', () => {
  const pem = privateKeyPem(keys.get('ed25519')!.privateKey);
  assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/);
});

test('fresh Ed25519 keys: RFC 8410 PKCS#8 with a 32-byte seed, never repeated, signing the same through both engines', () => {
  const prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
  const seeds = new Set<string>();
  for (let i = 0; i < 64; i++) {
    const { privateKey, publicKey } = generateKey('ed25519');
    assert.equal(privateKey.asymmetricKeyType, 'ed25519');
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    assert.equal(der.length, 48);
    assert.deepEqual(der.subarray(0, 16), prefix);
    seeds.add(der.subarray(16).toString('hex'));
    // The public key is the one the seed derives (OpenSSL's), and the signer (libsodium when it loads) agrees with OpenSSL's verify.
    assert.deepEqual(spkiDer(publicKey), spkiDer(createPublicKey(privateKey)));
    const sig = createSigner('ed25519', privateKey).sign(msg);
    assert.ok(cryptoVerify(null, msg, publicKey, sig));
  }
  assert.equal(seeds.size, 64, 'every seed is fresh');
});
