/**
 * The SQLite files areas keep beside svc.db (module-storage.ts `SqliteAttachedFile`), attached to
 * the store's connection under their schema names.
 */
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteAttachedFile } from '../module-storage.js';
import { StoreError } from '../store-error.js';

/** Attaches `<dataDir>/<file>` (created 0600) to `sqlite` under its schema, in WAL mode with the store's durability and cache. */
export function attachFile(
  sqlite: BetterSqlite3.Database,
  dataDir: string,
  attached: Pick<SqliteAttachedFile, 'file' | 'schema'>,
  opts: { synchronous: string; cacheMib: number },
): string {
  const file = join(dataDir, attached.file);
  const schema = attached.schema;
  // Created before SQLite does, as svc.db is: the -wal and -shm files inherit its mode (sqlite-store.ts).
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  sqlite.prepare(`attach database ? as ${schema}`).run(file);
  const mode = sqlite.pragma(`${schema}.journal_mode = WAL`, { simple: true });
  if (String(mode).toLowerCase() !== 'wal')
    throw new StoreError('invalid_config', `${file}: cannot enable WAL (journal_mode=${String(mode)})`);
  sqlite.pragma(`${schema}.synchronous = ${opts.synchronous}`);
  sqlite.pragma(`${schema}.cache_size = -${opts.cacheMib * 1024}`);
  return file;
}

/** Whether `schema` (`main`, or an attached file) has `table`. */
export const hasTable = (sqlite: BetterSqlite3.Database, schema: string, table: string): boolean =>
  sqlite.prepare(`select 1 from ${schema}.sqlite_master where type = 'table' and name = ?`).get(table) !== undefined;
