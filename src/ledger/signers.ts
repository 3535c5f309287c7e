/**
 * Ledger signature algorithms over node:crypto (OpenSSL). Pinned encodings:
 * - `ed25519`: RFC 8032 pure Ed25519, 64-byte signatures; public key published as the 32 raw bytes.
 * - `ecdsa-p256-sha256` / `ecdsa-p384-sha384`: ECDSA with signatures in IEEE P1363 form (r ‖ s, fixed
 *   64 / 96 bytes), not DER, so every signature of a key has one length and one spelling.
 * - `rsa-pkcs1-sha256`: RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2).
 * - `rsa-pss-sha256`: RSASSA-PSS, SHA-256, MGF1-SHA-256, salt length 32 (RFC 8017 §8.1).
 * Ed25519 runs on libsodium when it loads (ed25519-engine.ts; same signatures, faster), the rest on
 * OpenSSL. Non-Ed25519 public keys are published as base64 SPKI DER. `key_id` = lowercase hex of the first 16
 * bytes of SHA-256(SPKI DER) of the public key, for every algorithm.
 */
import {
  constants,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign as cryptoSign,
  verify as cryptoVerify,
  type KeyObject,
} from 'node:crypto';
import { sodiumSign, sodiumVerify } from './ed25519-engine.js';

/** The signature algorithms the ledger accepts (spec "audit verify"). */
export const SIGNATURE_ALGORITHMS = [
  'ed25519',
  'ecdsa-p256-sha256',
  'ecdsa-p384-sha384',
  'rsa-pkcs1-sha256',
  'rsa-pss-sha256',
] as const;
export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];

/** The default algorithm for new keys. */
export const DEFAULT_ALGORITHM: SignatureAlgorithm = 'ed25519';

/** True when `name` is one of {@link SIGNATURE_ALGORITHMS}. */
export function isSignatureAlgorithm(name: string): name is SignatureAlgorithm {
  return (SIGNATURE_ALGORITHMS as readonly string[]).includes(name);
}

/** Signs ledger preimages with one private key. */
export interface Signer {
  readonly algorithm: SignatureAlgorithm;
  readonly keyId: string;
  readonly publicKey: KeyObject;
  /** Signature bytes over `data`. */
  sign(data: Uint8Array): Buffer;
}

/** Verifies ledger signatures with one public key. */
export interface Verifier {
  readonly algorithm: SignatureAlgorithm;
  readonly keyId: string;
  readonly publicKey: KeyObject;
  /** True when `sig` is a valid signature of `data`; never throws on malformed signatures. */
  verify(data: Uint8Array, sig: Uint8Array): boolean;
}

interface AlgParams {
  digest: string | null;
  options: { dsaEncoding?: 'ieee-p1363'; padding?: number; saltLength?: number };
}

function params(alg: SignatureAlgorithm): AlgParams {
  switch (alg) {
    case 'ed25519':
      return { digest: null, options: {} };
    case 'ecdsa-p256-sha256':
      return { digest: 'sha256', options: { dsaEncoding: 'ieee-p1363' } };
    case 'ecdsa-p384-sha384':
      return { digest: 'sha384', options: { dsaEncoding: 'ieee-p1363' } };
    case 'rsa-pkcs1-sha256':
      return { digest: 'sha256', options: { padding: constants.RSA_PKCS1_PADDING } };
    case 'rsa-pss-sha256':
      return { digest: 'sha256', options: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } };
  }
}

/** Throw unless `key` (private or public) has the type `alg` needs. */
export function assertKeyMatches(alg: SignatureAlgorithm, key: KeyObject): void {
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const ok =
    (alg === 'ed25519' && type === 'ed25519') ||
    (alg === 'ecdsa-p256-sha256' && type === 'ec' && curve === 'prime256v1') ||
    (alg === 'ecdsa-p384-sha384' && type === 'ec' && curve === 'secp384r1') ||
    (alg === 'rsa-pkcs1-sha256' && type === 'rsa') ||
    (alg === 'rsa-pss-sha256' && (type === 'rsa' || type === 'rsa-pss'));
  if (!ok) throw new TypeError(`key of type ${type ?? '?'}${curve ? `/${curve}` : ''} does not fit algorithm ${alg}`);
  if ((type === 'rsa' || type === 'rsa-pss') && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
    throw new TypeError('RSA keys must be at least 2048 bits');
  }
}

/** The algorithm a private/public key implies; RSA keys are ambiguous and default to `rsa-pkcs1-sha256`. */
export function inferAlgorithm(key: KeyObject): SignatureAlgorithm {
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (type === 'ed25519') return 'ed25519';
  if (type === 'ec' && curve === 'prime256v1') return 'ecdsa-p256-sha256';
  if (type === 'ec' && curve === 'secp384r1') return 'ecdsa-p384-sha384';
  if (type === 'rsa') return 'rsa-pkcs1-sha256';
  if (type === 'rsa-pss') return 'rsa-pss-sha256';
  throw new TypeError(`unsupported key type ${type ?? '?'}${curve ? `/${curve}` : ''}`);
}

/** SPKI DER of a public key. */
export function spkiDer(publicKey: KeyObject): Buffer {
  return publicKey.export({ type: 'spki', format: 'der' });
}

/** Stable key id: hex of the first 16 bytes of SHA-256(SPKI DER). */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(spkiDer(publicKey)).digest('hex').slice(0, 32);
}

// RFC 8410 §4: an Ed25519 SPKI is this fixed 12-byte prefix followed by the 32-byte key.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Published public key bytes: raw 32 bytes for Ed25519, SPKI DER otherwise. */
export function publicKeyBytes(alg: SignatureAlgorithm, publicKey: KeyObject): Buffer {
  const der = spkiDer(publicKey);
  if (alg !== 'ed25519') return der;
  if (der.length !== 44 || !der.subarray(0, 12).equals(ED25519_SPKI_PREFIX)) throw new TypeError('not an Ed25519 key');
  return der.subarray(12);
}

/** PEM (SPKI) of a public key. */
export function publicKeyPem(publicKey: KeyObject): string {
  return publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

/** A signer for a private key (KeyObject or PKCS#8 PEM). */
export function createSigner(alg: SignatureAlgorithm, privateKey: KeyObject | string): Signer {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  if (key.type !== 'private') throw new TypeError('signer needs a private key');
  assertKeyMatches(alg, key);
  const publicKey = createPublicKey(key);
  const { digest, options } = params(alg);
  const signKey = { key, ...options };
  return {
    algorithm: alg,
    keyId: keyIdOf(publicKey),
    publicKey,
    sign: (alg === 'ed25519' ? sodiumSign(key) : null) ?? ((data) => cryptoSign(digest, data, signKey)),
  };
}

/** A verifier for a public key (KeyObject). */
export function createVerifier(alg: SignatureAlgorithm, publicKey: KeyObject): Verifier {
  const key = publicKey.type === 'private' ? createPublicKey(publicKey) : publicKey;
  assertKeyMatches(alg, key);
  const { digest, options } = params(alg);
  const verifyKey = { key, ...options };
  const fast = alg === 'ed25519' ? sodiumVerify(publicKeyBytes(alg, key)) : null;
  if (fast !== null) return { algorithm: alg, keyId: keyIdOf(key), publicKey: key, verify: fast };
  return {
    algorithm: alg,
    keyId: keyIdOf(key),
    publicKey: key,
    verify(data, sig) {
      try {
        return cryptoVerify(digest, data, verifyKey, sig);
      } catch {
        return false; // OpenSSL throws on some malformed signatures; for us that is simply "invalid"
      }
    },
  };
}

/** The fixed DER prefix of an Ed25519 private key in PKCS#8 (RFC 8410 §7); the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * A fresh Ed25519 key from 32 random bytes (RFC 8032 §5.1.5: the private key is a random seed),
 * made with createPrivateKey rather than generateKeyPairSync. Node 20 deadlocks when a garbage
 * collection runs inside a JWK export of a generated key (sodiumSign exports one) and collects
 * the generation job, whose destructor takes the same key's mutex the export holds: seen once in
 * this suite (main thread in ExportJWKEdKey, then ~KeyGenJob, waiting on that mutex for good). A key
 * made from bytes has no generation job.
 */
function generateEd25519(): { privateKey: KeyObject; publicKey: KeyObject } {
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, randomBytes(32)]);
  try {
    const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    return { privateKey, publicKey: createPublicKey(privateKey) };
  } finally {
    der.fill(0);
  }
}

/** A fresh key pair; RSA keys are 3072-bit (NIST SP 800-57 128-bit strength). */
export function generateKey(alg: SignatureAlgorithm = DEFAULT_ALGORITHM, rsaBits = 3072): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (alg) {
    case 'ed25519':
      return generateEd25519();
    case 'ecdsa-p256-sha256':
      return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    case 'ecdsa-p384-sha384':
      return generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    case 'rsa-pkcs1-sha256':
    case 'rsa-pss-sha256':
      // Plain `rsa` keys, so the same key file works with either padding and any tool reads it.
      return generateKeyPairSync('rsa', { modulusLength: rsaBits });
  }
}

/** PKCS#8 PEM of a private key. */
export function privateKeyPem(privateKey: KeyObject): string {
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Parse a public key given as base64 (raw 32 bytes for Ed25519, or SPKI DER) or PEM. */
export function parsePublicKey(alg: SignatureAlgorithm, text: string): KeyObject {
  const trimmed = text.trim();
  let key: KeyObject;
  if (trimmed.startsWith('-----BEGIN')) {
    key = createPublicKey(trimmed);
  } else {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) throw new TypeError('public key is not base64');
    const bytes = Buffer.from(trimmed, 'base64');
    const der = alg === 'ed25519' && bytes.length === 32 ? Buffer.concat([ED25519_SPKI_PREFIX, bytes]) : bytes;
    key = createPublicKey({ key: der, format: 'der', type: 'spki' });
  }
  assertKeyMatches(alg, key);
  return key;
}

/**
 * Parse an auditor-pinned key (`svc audit verify --pubkey`): `<alg>:<base64>` or, with no known
 * algorithm prefix, a bare base64/PEM key of `defaultAlg` (`--pubkey-alg`, default ed25519).
 */
export function parsePinnedKey(spec: string, defaultAlg: SignatureAlgorithm = DEFAULT_ALGORITHM): Verifier {
  const colon = spec.indexOf(':');
  if (colon > 0) {
    const prefix = spec.slice(0, colon);
    if (isSignatureAlgorithm(prefix)) return createVerifier(prefix, parsePublicKey(prefix, spec.slice(colon + 1)));
    if (!spec.startsWith('-----BEGIN')) throw new TypeError(`unknown public key algorithm ${JSON.stringify(prefix)}`);
  }
  return createVerifier(defaultAlg, parsePublicKey(defaultAlg, spec));
}
