/**
 * The one-time setup token (DECISIONS.md): `svcst_` + base32 of 32 random bytes, printed on
 * stdout only (never to the log), its SHA-256 kept in `<data-dir>/setup.token` (0600) and the
 * file deleted when redeemed. Minted at every start while no user exists, so a restart replaces
 * a lost token's digest.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { base32Encode } from './base32.js';
import { digestsEqual, sha256Hex } from './opaque-token.js';

export const SETUP_TOKEN_FILE = 'setup.token';
const PREFIX = 'svcst_';
const SETUP_TOKEN = /^svcst_[A-Z2-7]{52}$/;

/** Mint a token, store its digest atomically with mode 0600, and return the token text. */
export async function mintSetupToken(dataDir: string): Promise<string> {
  const token = PREFIX + base32Encode(randomBytes(32));
  const file = path.join(dataDir, SETUP_TOKEN_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${sha256Hex(token)}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return token;
}

/** The lines printed on stdout at first boot. */
export function setupTokenBanner(token: string): string {
  return `setup token: ${token}\nredeem it once: svc auth bootstrap --setup-token-file - (or POST /v1/setup)\n`;
}

/** True when `token` matches the stored digest (constant-time); false when there is none. */
export async function setupTokenMatches(dataDir: string, token: string): Promise<boolean> {
  let stored: string;
  try {
    stored = (await readFile(path.join(dataDir, SETUP_TOKEN_FILE), 'utf8')).trim();
  } catch {
    return false;
  }
  const presented = sha256Hex(token);
  const ok = digestsEqual(presented, /^[0-9a-f]{64}$/.test(stored) ? stored : sha256Hex(''));
  return ok && SETUP_TOKEN.test(token);
}

/** Delete the digest (redeemed, or a user already exists). */
export async function removeSetupToken(dataDir: string): Promise<void> {
  await rm(path.join(dataDir, SETUP_TOKEN_FILE), { force: true });
}
