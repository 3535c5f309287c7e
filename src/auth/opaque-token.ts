/**
 * Opaque bearer tokens (DECISIONS.md "Setup, credentials, sessions"): `svcs_<selector>_<secret>`
 * for sessions and `svck_<selector>_<secret>` for API keys. The selector (16 random bytes, 26
 * base32 chars) finds the row; only SHA-256 of the secret (32 bytes, 52 chars) is stored, and it
 * is compared in constant time, so a database leak yields no usable token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { base32Encode, base32Length, isBase32 } from './base32.js';

export type TokenKind = 'session' | 'api_key';

const PREFIX: Record<TokenKind, string> = { session: 'svcs_', api_key: 'svck_' };
const SELECTOR_BYTES = 16;
const SECRET_BYTES = 32;
const SELECTOR_LEN = base32Length(SELECTOR_BYTES);
const SECRET_LEN = base32Length(SECRET_BYTES);

/** A freshly minted token: the text goes to the client once, the rest to the store. */
export interface MintedToken {
  token: string;
  selector: string;
  /** hex SHA-256 of the secret text */
  secretHash: string;
}

/** A syntactically valid token split into its parts. */
export interface ParsedToken {
  kind: TokenKind;
  selector: string;
  secret: string;
}

/** Hex SHA-256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Mint a new random token of `kind`. */
export function mintToken(kind: TokenKind): MintedToken {
  const selector = base32Encode(randomBytes(SELECTOR_BYTES));
  const secret = base32Encode(randomBytes(SECRET_BYTES));
  return { token: `${PREFIX[kind]}${selector}_${secret}`, selector, secretHash: sha256Hex(secret) };
}

/** Parse a bearer token; undefined for anything that is not exactly one of our shapes. */
export function parseToken(text: string): ParsedToken | undefined {
  const kind: TokenKind | undefined = text.startsWith(PREFIX.session) ? 'session' : text.startsWith(PREFIX.api_key) ? 'api_key' : undefined;
  if (!kind) return undefined;
  const body = text.slice(5);
  if (body.length !== SELECTOR_LEN + 1 + SECRET_LEN || body[SELECTOR_LEN] !== '_') return undefined;
  const selector = body.slice(0, SELECTOR_LEN);
  const secret = body.slice(SELECTOR_LEN + 1);
  if (!isBase32(selector) || !isBase32(secret)) return undefined;
  return { kind, selector, secret };
}

/** Constant-time equality of two hex digests of equal length (unequal lengths: false, still a full compare). */
export function digestsEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  if (a.length !== b.length || a.length === 0) {
    timingSafeEqual(a.length === 0 ? Buffer.alloc(32) : a, a.length === 0 ? Buffer.alloc(32) : a);
    return false;
  }
  return timingSafeEqual(a, b);
}

// Compared against on an unknown selector so a miss costs what a hit costs (no timing oracle
// telling which selectors exist).
const DUMMY_DIGEST = sha256Hex('svc.dummy.secret');

/** Check a presented secret against a stored digest, or against a dummy when there is none. */
export function secretMatches(secret: string, storedHash: string | undefined): boolean {
  const presented = sha256Hex(secret);
  const ok = digestsEqual(presented, storedHash ?? DUMMY_DIGEST);
  return storedHash !== undefined && ok;
}
