/**
 * Helpers shared by the identity commands (auth, users, tokens, tenants, superadmin): secrets from
 * a flag, a file or stdin, one-secret-per-stdin, list rendering. Kept beside the commands that use
 * them; not a command itself (the index lists commands explicitly).
 */
import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { promptHidden } from '../../client/prompt.js';
import { CliUsageError } from '../../client/errors.js';

/**
 * A secret given inline or as a file (`-` for stdin); exactly one source, trailing newline stripped.
 * `-` on a terminal prompts ("Paste the setup token:") with echo off instead of waiting silently.
 */
export async function readSecret(
  what: string,
  inline: string | undefined,
  file: string | undefined,
  stdin: Readable,
  stderr: Writable = process.stderr,
): Promise<string | undefined> {
  if (inline !== undefined && file !== undefined) throw new CliUsageError(`give the ${what} inline or as a file, not both`);
  if (file === undefined) return inline;
  let text: string;
  if (file === '-' && (stdin as { isTTY?: boolean }).isTTY === true) {
    text = await promptHidden(what === 'password' ? 'Password: ' : `Paste the ${what}: `, stdin, stderr);
  } else if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new CliUsageError(`cannot read the ${what} file ${file}: ${(err as Error).message}`);
    }
  }
  // Only the line terminator is stripped: spaces may be part of a password.
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new CliUsageError(`the ${what} file ${file === '-' ? '(stdin)' : file} is empty`);
  return value;
}

/** Refuses two secrets from stdin: stdin can be read only once. */
export function oneStdin(...files: Array<string | undefined>): void {
  if (files.filter((f) => f === '-').length > 1) throw new CliUsageError('only one secret can come from stdin (-)');
}

/** A fixed-width table of the given columns; `(none)` when empty. */
export function table<T>(items: readonly T[], columns: ReadonlyArray<[string, (item: T) => unknown]>): string {
  if (items.length === 0) return '(none)';
  const rows = items.map((item) => columns.map(([, get]) => cell(get(item))));
  const widths = columns.map(([head], i) => Math.max(head.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(columns.map(([h]) => h.toUpperCase())), ...rows.map(line)].join('\n');
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v);
}

/** `key: value` lines for one record. */
export function fields(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys
    .map((k) => `${`${k}:`.padEnd(width + 1)} ${Array.isArray(record[k]) ? (record[k] as unknown[]).join(', ') : cell(record[k])}`)
    .join('\n');
}

/**
 * Path segment of an id: a UUID, or a one-line usage error (exit 2) before anything is sent, rather
 * than the server's JSON-Schema pattern in a 400. Nothing else could change the path either.
 */
export function idSegment(id: string, what = 'id'): string {
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(id))
    throw new CliUsageError(`invalid ${what} ${JSON.stringify(id)}: expected a UUID such as 0190a000-0000-7000-8000-000000000001`);
  return id.toLowerCase();
}

/** Shape of a page of the list routes. */
export interface Page<T> {
  items: T[];
  has_more: boolean;
  cursor?: string;
}
