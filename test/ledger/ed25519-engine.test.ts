import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { sign as opensslSign, verify as opensslVerify } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { ed25519Engine, parseCryptoEngine } from '../../src/ledger/ed25519-engine.js';
// Keys from generateKey (CSPRNG seed, createPrivateKey): generateKeyPairSync keys can deadlock Node 20 in sodiumSign's JWK export
// (signers.ts).
import { createSigner, createVerifier, generateKey, publicKeyBytes } from '../../src/ledger/signers.js';

noble.hashes.sha512 = sha512;

// The order of the Ed25519 group: S + L is the same point arithmetic but a non-canonical encoding.
const L = (1n << 252n) + 27742317777372353535851937790883648493n;

function addL(sig: Buffer): Buffer {
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i] as number);
  s += L;
  const out = Buffer.from(sig);
  for (let i = 32; i < 64; i++) {
    out[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return out;
}

test('the default engine is libsodium on this platform (the prebuilt binary loads)', () => {
  // CI and every supported platform ship sodium-native's prebuilt binary; OpenSSL is the fallback.
  assert.deepEqual(ed25519Engine(), { name: 'libsodium' });
});

test('libsodium signatures are byte-equal to OpenSSL signatures and verify with @noble/ed25519', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), (msg) => {
      const { privateKey, publicKey } = generateKey('ed25519');
      const signer = createSigner('ed25519', privateKey);
      const data = Buffer.from(msg);
      const ours = signer.sign(data);
      assert.ok(ours.equals(opensslSign(null, data, privateKey)), 'same bytes as OpenSSL');
      assert.ok(noble.verify(ours, data, publicKeyBytes('ed25519', publicKey)), 'independent verifier accepts');
      assert.ok(opensslVerify(null, data, publicKey, ours));
    }),
    { numRuns: 40 },
  );
});

test('the libsodium verifier agrees with OpenSSL on valid, altered and malformed signatures', () => {
  const { privateKey, publicKey } = generateKey('ed25519');
  const other = generateKey('ed25519');
  const v = createVerifier('ed25519', publicKey);
  const msg = Buffer.from('svc.audit.event.v1 preimage stand-in');
  const sig = opensslSign(null, msg, privateKey);
  assert.equal(v.verify(msg, sig), true);
  const cases: Array<[string, Buffer, Buffer]> = [
    ['other message', Buffer.from('other'), sig],
    ['flipped R bit', msg, Buffer.from(sig.map((b, i) => (i === 3 ? b ^ 1 : b)))],
    ['flipped S bit', msg, Buffer.from(sig.map((b, i) => (i === 40 ? b ^ 1 : b)))],
    ['S + L (non-canonical)', msg, addL(sig)],
    ['other key', msg, opensslSign(null, msg, other.privateKey)],
    ['empty', msg, Buffer.alloc(0)],
    ['63 bytes', msg, sig.subarray(0, 63)],
    ['65 bytes', msg, Buffer.concat([sig, Buffer.alloc(1)])],
    ['all zeros', msg, Buffer.alloc(64)],
  ];
  for (const [name, m, s] of cases) {
    let openssl = false;
    try {
      openssl = opensslVerify(null, m, publicKey, s);
    } catch {
      openssl = false;
    }
    assert.equal(v.verify(m, s), false, name);
    assert.equal(openssl, false, `${name}: OpenSSL rejects it too`);
  }
});

test('SERVICE_CRYPTO_ENGINE: auto, libsodium and openssl are accepted; anything else is refused by name', () => {
  assert.equal(parseCryptoEngine(undefined), 'auto');
  assert.equal(parseCryptoEngine(''), 'auto');
  assert.equal(parseCryptoEngine(' LibSodium '), 'libsodium');
  assert.equal(parseCryptoEngine('openssl'), 'openssl');
  assert.throws(() => parseCryptoEngine('nacl'), /SERVICE_CRYPTO_ENGINE must be one of auto, libsodium, openssl/);
});

test('SERVICE_CRYPTO_ENGINE=openssl signs with node:crypto, and the signatures are the same bytes', () => {
  const { privateKey } = generateKey('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const msg = Buffer.from('same bytes from either engine');
  const mod = fileURLToPath(new URL('../../src/ledger/signers.js', import.meta.url));
  const engineMod = fileURLToPath(new URL('../../src/ledger/ed25519-engine.js', import.meta.url));
  const script = `
    const { createSigner } = await import(${JSON.stringify(mod)});
    const { ed25519Engine } = await import(${JSON.stringify(engineMod)});
    const sig = createSigner('ed25519', ${JSON.stringify(pem)}).sign(Buffer.from(${JSON.stringify(msg.toString('base64'))}, 'base64'));
    process.stdout.write(JSON.stringify({ engine: ed25519Engine(), sig: sig.toString('base64') }));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, SERVICE_CRYPTO_ENGINE: 'openssl' },
    encoding: 'utf8',
  });
  assert.equal(child.status, 0, child.stderr);
  const out = JSON.parse(child.stdout) as { engine: { name: string; reason: string }; sig: string };
  assert.deepEqual(out.engine, { name: 'openssl', reason: 'SERVICE_CRYPTO_ENGINE=openssl' });
  assert.equal(out.sig, createSigner('ed25519', privateKey).sign(msg).toString('base64'));
});
