/**
 * Sealing of secrets at rest (DECISIONS.md "Sealed secrets"): AES-256-GCM, a fresh random 96-bit
 * nonce per value, the owning record's id as associated data (a sealed value moved to another
 * record does not open). The key comes from `SERVICE_SECRETS_KEY_FILE` or `secrets.key` (0600) in
 * the data directory, minted on first use; replicas share one key file. One implementation for the
 * secrets store, webhook subscription secrets, receiver credentials and the SSO client secret.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

export const SECRETS_KEY_FILE = 'secrets.key';
const PREFIX = 'sv1';

/** A sealed value failed to open: wrong key, wrong record, or altered bytes. Never carries the value. */
export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

export class Sealer {
  /** first 16 hex of SHA-256(key): names the key in sealed text and in key custody listings */
  readonly keyId: string;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new SealError(`a sealing key is 32 bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 16);
  }

  /** `sv1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>` */
  seal(plaintext: string, recordId: string): string {
    const nonce = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.#key, nonce);
    c.setAAD(Buffer.from(recordId, 'utf8'));
    const body = Buffer.concat([nonce, c.update(plaintext, 'utf8'), c.final(), c.getAuthTag()]);
    return `${PREFIX}:${this.keyId}:${body.toString('base64url')}`;
  }

  open(sealed: string, recordId: string): string {
    const [prefix, keyId, b64, extra] = sealed.split(':');
    if (prefix !== PREFIX || !keyId || !b64 || extra !== undefined) throw new SealError('not a sealed value');
    if (keyId !== this.keyId) throw new SealError(`sealed with key ${keyId}, but this server holds key ${this.keyId}`);
    const body = Buffer.from(b64, 'base64url');
    if (body.length < 28) throw new SealError('sealed value is truncated');
    const d = createDecipheriv('aes-256-gcm', this.#key, body.subarray(0, 12));
    d.setAAD(Buffer.from(recordId, 'utf8'));
    d.setAuthTag(body.subarray(body.length - 16));
    try {
      return Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()]).toString('utf8');
    } catch {
      throw new SealError('sealed value does not open with this key for this record (altered, moved or wrong key)');
    }
  }
}

/** The last four characters at most, for listings; nothing for values of 8 characters or fewer. */
export function secretHint(value: string): string {
  const chars = [...value];
  return chars.length > 8 ? chars.slice(-4).join('') : '';
}

/**
 * Loads the sealing key: `SERVICE_SECRETS_KEY_FILE` (must exist, 32 raw bytes or 64 hex, not group or
 * world readable), else `<dataDir>/secrets.key`, created 0600 with 32 random bytes if absent.
 */
export async function loadSealer(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<Sealer> {
  const configured = env['SERVICE_SECRETS_KEY_FILE'] || undefined;
  const file = configured ?? path.join(dataDir, SECRETS_KEY_FILE);
  if (!configured) {
    try {
      const fh = await open(file, 'wx', 0o600);
      await fh.writeFile(randomBytes(32));
      await fh.sync();
      await fh.close();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const st = await stat(file).catch(() => {
    throw new SealError(`secrets key file ${file} does not exist (SERVICE_SECRETS_KEY_FILE)`);
  });
  if ((st.mode & 0o077) !== 0)
    throw new SealError(`secrets key file ${file} is readable by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`);
  const raw = await readFile(file);
  const text = raw.toString('utf8').trim();
  const key = raw.length === 32 ? raw : /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : undefined;
  if (!key) throw new SealError(`secrets key file ${file} must hold 32 raw bytes or 64 hex digits`);
  await chmod(file, 0o600).catch(() => undefined);
  return new Sealer(key);
}
