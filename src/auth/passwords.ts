/**
 * Password hashing with scrypt from node:crypto (DECISIONS.md: argon2id 64 MiB t=3 p=1 "or scrypt
 * with equivalent cost"). N=2^16, r=8, p=1 makes scrypt touch 128·N·r = 64 MiB, the same memory
 * as the argon2id profile, and takes ~200 ms on one core here (RFC 7914 §2; OWASP Password Storage
 * Cheat Sheet). `crypto.scrypt` runs on the libuv thread pool, never on the event loop.
 * Stored form: `scrypt$<log2 N>$<r>$<p>$<salt b64>$<key b64>`; parameters travel with the hash so
 * they can be raised later without breaking old hashes.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../contract/errors.js';

export interface ScryptParams {
  log2N: number;
  r: number;
  p: number;
}

/** The production cost (see the file comment); documented in docs/auth.md. */
export const PASSWORD_PARAMS: ScryptParams = { log2N: 16, r: 8, p: 1 };
export const PASSWORD_MIN_LENGTH = 12;
/** Longer inputs are refused before hashing so nobody can make the server hash megabytes. */
export const PASSWORD_MAX_LENGTH = 1024;
const KEY_LEN = 32;
const SALT_LEN = 16;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const N = 2 ** params.log2N;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LEN, { N, r: params.r, p: params.p, maxmem: 256 * N * params.r * params.p }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Throws 400 `weak_password` unless the password meets the policy. */
export function assertPasswordPolicy(password: string): void {
  // Length in code points, not UTF-16 units (NIST SP 800-63B §5.1.1.2).
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) throw new ApiError('weak_password', `password must be at least ${PASSWORD_MIN_LENGTH} characters`);
  if (length > PASSWORD_MAX_LENGTH) throw new ApiError('weak_password', `password must be at most ${PASSWORD_MAX_LENGTH} characters`);
}

/** Hash a password for storage. */
export async function hashPassword(password: string, params: ScryptParams = PASSWORD_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_LEN);
  const key = await derive(password, salt, params);
  return `scrypt$${params.log2N}$${params.r}$${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Verify a password against a stored hash; a malformed hash verifies nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const params = { log2N: Number(parts[1]), r: Number(parts[2]), p: Number(parts[3]) };
  // Bounded so a corrupt row cannot make one login allocate gigabytes.
  if (![params.log2N, params.r, params.p].every((n) => Number.isInteger(n) && n > 0) || params.log2N > 20 || params.r > 32 || params.p > 16)
    return false;
  const salt = Buffer.from(parts[4] as string, 'base64');
  const expected = Buffer.from(parts[5] as string, 'base64');
  const key = await derive(password, salt, params);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

const dummies = new Map<string, Promise<string>>();

/**
 * A hash to verify against when the account does not exist, so an unknown e-mail costs exactly
 * the scrypt work of a wrong password (no user-enumeration timing oracle).
 */
export function dummyPasswordHash(params: ScryptParams = PASSWORD_PARAMS): Promise<string> {
  const key = `${params.log2N}/${params.r}/${params.p}`;
  let dummy = dummies.get(key);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString('hex'), params);
    dummies.set(key, dummy);
  }
  return dummy;
}
