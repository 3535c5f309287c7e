/**
 * File handling for TLS material: atomic writes with exact modes, permission checks on key files,
 * and read errors that name the file.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Machine-readable reason for a TLS setup failure; the message says what to do. */
export type TlsErrorCode =
  | 'tls_pair_incomplete'
  | 'tls_file_unreadable'
  | 'tls_cert_invalid'
  | 'tls_key_invalid'
  | 'tls_key_mismatch'
  | 'tls_key_permissions'
  | 'tls_cert_expired';

/** A TLS setup failure that names the offending file, so `svc serve` can print it and exit. */
export class TlsError extends Error {
  override readonly name = 'TlsError';
  constructor(
    readonly code: TlsErrorCode,
    message: string,
    readonly file?: string,
  ) {
    super(message);
  }
}

/** Read a PEM file as UTF-8; a missing or unreadable file becomes a TlsError naming it. */
export async function readPemFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new TlsError('tls_file_unreadable', `cannot read TLS ${what} file ${path}: ${reason}`, path);
  }
}

/** Read a file, or undefined when it does not exist (other errors propagate). */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Group/other permission bits of a file (0 when only the owner can access it). */
export async function looseBits(path: string): Promise<number> {
  return (await stat(path)).mode & 0o077;
}

/** Refuse a private key that group or other users can access: such a key must be assumed copied. */
export async function assertPrivateKeyMode(path: string): Promise<void> {
  if (process.platform === 'win32') return; // POSIX modes do not describe Windows ACLs.
  const mode = (await stat(path)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new TlsError(
      'tls_key_permissions',
      `TLS private key ${path} is accessible by group/other users (mode ${mode.toString(8).padStart(4, '0')}); ` +
        `restrict it with: chmod 600 ${shellQuote(path)}`,
      path,
    );
  }
}

/** Create a directory (and parents) and force its mode, since mkdir's mode only applies to new dirs and is masked by umask. */
export async function ensurePrivateDir(path: string, mode = 0o700): Promise<void> {
  await mkdir(path, { recursive: true, mode });
  await chmod(path, mode);
}

/**
 * Write a file atomically: temp file in the same directory (created with `mode`, fsynced), then
 * rename(2) over the target, so a reader sees the old content or the new, never a torn file.
 */
export async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.writeFile(data, 'utf8');
      await fh.chmod(mode); // umask may have cleared bits we asked for; set the exact mode.
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await syncDir(dirname(path));
}

/** fsync the directory so the rename itself survives a crash (POSIX leaves it in the page cache otherwise). */
async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still done.
  } finally {
    await fh.close();
  }
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
