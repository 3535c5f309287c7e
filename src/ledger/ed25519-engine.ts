/**
 * Which implementation signs and verifies Ed25519 (the ledger's default algorithm).
 *
 * Ed25519 is deterministic (RFC 8032): every correct implementation produces the same 64 bytes for
 * the same key and message, so the engine changes speed, never a signature. Measured here (Node 20,
 * OpenSSL 3.0.19, libsodium through sodium-native 5.1.0, same run, interleaved): libsodium signs
 * about 1.6x and verifies about 1.5x as fast as node:crypto, whose every call also sets up an
 * OpenSSL signing context. The signatures of one engine are tested byte-equal to the other's and
 * re-verified by @noble/ed25519 (test/ledger/ed25519-engine.test.ts).
 *
 * `SERVICE_CRYPTO_ENGINE` chooses: `auto` (default: libsodium when its prebuilt binary loads, else
 * OpenSSL), `libsodium` (refuse to run without it), `openssl` (node:crypto only, for example where
 * a FIPS-validated OpenSSL provider is mandated). ECDSA and RSA always use node:crypto. The variable
 * is read once per thread, so worker threads follow the main thread's choice.
 */
import { createRequire } from 'node:module';
import type { KeyObject } from 'node:crypto';

/** The engines `SERVICE_CRYPTO_ENGINE` accepts. */
export const CRYPTO_ENGINE_SETTINGS = ['auto', 'libsodium', 'openssl'] as const;
export type CryptoEngineSetting = (typeof CRYPTO_ENGINE_SETTINGS)[number];
/** The engine in use. */
export type Ed25519EngineName = 'libsodium' | 'openssl';

/** The part of sodium-native this module calls. */
interface Sodium {
  sodium_malloc(size: number): Buffer;
  crypto_sign_seed_keypair(pk: Buffer, sk: Buffer, seed: Buffer): void;
  crypto_sign_detached(sig: Buffer, message: Uint8Array, sk: Buffer): void;
  crypto_sign_verify_detached(sig: Uint8Array, message: Uint8Array, pk: Buffer): boolean;
  sodium_memzero(buf: Buffer): void;
}

/** Throws unless `value` (from the environment or a flag) names an engine setting. */
export function parseCryptoEngine(value: string | undefined): CryptoEngineSetting {
  const v = (value ?? '').trim().toLowerCase() || 'auto';
  if (!(CRYPTO_ENGINE_SETTINGS as readonly string[]).includes(v)) {
    throw new TypeError(`SERVICE_CRYPTO_ENGINE must be one of ${CRYPTO_ENGINE_SETTINGS.join(', ')}, not ${JSON.stringify(value)}`);
  }
  return v as CryptoEngineSetting;
}

interface Loaded {
  name: Ed25519EngineName;
  sodium: Sodium | null;
  /** why libsodium is not used, when it is not */
  reason?: string;
}

let loaded: Loaded | undefined;

function load(): Loaded {
  if (loaded !== undefined) return loaded;
  const setting = parseCryptoEngine(process.env['SERVICE_CRYPTO_ENGINE']);
  if (setting === 'openssl') return (loaded = { name: 'openssl', sodium: null, reason: 'SERVICE_CRYPTO_ENGINE=openssl' });
  try {
    const sodium = createRequire(import.meta.url)('sodium-native') as Sodium;
    return (loaded = { name: 'libsodium', sodium });
  } catch (err) {
    const reason = `sodium-native did not load: ${err instanceof Error ? err.message : String(err)}`;
    if (setting === 'libsodium') throw new Error(`SERVICE_CRYPTO_ENGINE=libsodium: ${reason}`);
    return (loaded = { name: 'openssl', sodium: null, reason });
  }
}

/** The Ed25519 engine of this thread, and why it is not libsodium when it is not. */
export function ed25519Engine(): { name: Ed25519EngineName; reason?: string } {
  const l = load();
  return l.reason === undefined ? { name: l.name } : { name: l.name, reason: l.reason };
}

/** libsodium's sign function for an Ed25519 private key, or null when the engine is OpenSSL. */
export function sodiumSign(privateKey: KeyObject): ((data: Uint8Array) => Buffer) | null {
  const { sodium } = load();
  if (sodium === null) return null;
  const jwk = privateKey.export({ format: 'jwk' });
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string')
    throw new TypeError('not an Ed25519 private key');
  // The secret key (seed ‖ public key) lives in guarded, mlock'ed memory that is never swapped out.
  const seed = sodium.sodium_malloc(32);
  Buffer.from(jwk.d, 'base64url').copy(seed);
  const pk = Buffer.alloc(32);
  const sk = sodium.sodium_malloc(64);
  sodium.crypto_sign_seed_keypair(pk, sk, seed);
  sodium.sodium_memzero(seed);
  // The same key, or the two engines would sign differently: refuse rather than publish a wrong key.
  if (!pk.equals(Buffer.from(jwk.x, 'base64url'))) throw new Error('libsodium derived another public key from this Ed25519 seed');
  return (data) => {
    const sig = Buffer.allocUnsafe(64);
    sodium.crypto_sign_detached(sig, data, sk);
    return sig;
  };
}

/** libsodium's verify function for a raw 32-byte Ed25519 public key, or null when the engine is OpenSSL. */
export function sodiumVerify(publicKey: Uint8Array): ((data: Uint8Array, sig: Uint8Array) => boolean) | null {
  const { sodium } = load();
  if (sodium === null) return null;
  if (publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes');
  const pk = Buffer.from(publicKey);
  // libsodium asserts the signature length; any other length is simply not a valid signature.
  return (data, sig) => sig.length === 64 && sodium.crypto_sign_verify_detached(sig, data, pk);
}
