/**
 * `svc backup`: a copy of a SQLite data directory as of one instant, taken while `svc serve` runs
 * (docs/storage.md "Backups").
 *
 * The database is svc.db and the files areas keep beside it (module-storage.ts `SqliteAttachedFile`),
 * and copying them one after the other is not a copy of one instant: what commits between two copies
 * is in one and not the other (modules/accessmap/sqlite-edge-file.ts says what that would cost the
 * access map). So:
 *
 * 1. A second connection takes svc.db's write lock the way the store's transactions do (`BEGIN` and
 *    a write that changes nothing, sqlite-dialect.ts `SVC_DB_LOCK`): from here until step 3 no
 *    transaction of the service commits to svc.db. A writer of an attached file on a connection of
 *    its own may go on; the area makes that safe for its file.
 * 2. A read transaction on a third connection, with every file attached, reads each file: its
 *    snapshots are now fixed, and each file's `backupFacts` are read from them.
 * 3. The lock is released (held for a few milliseconds; the service's writers wait for it, as for
 *    any transaction, up to their busy timeout).
 * 4. SQLite's online backup copies each file from that read transaction's snapshot, while the
 *    service goes on writing; then the keys (`audit-keys/`) and the TLS certificate (`tls/`) are
 *    copied, so the destination is a data directory `svc serve --data-dir` starts on.
 */
import BetterSqlite3 from 'better-sqlite3';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SVC_DB_LOCK } from './sqlite-dialect.js';
import { SQLITE_FILE_NAME } from './sqlite-store.js';
import { StoreError } from '../store-error.js';
import { storage } from '../../storage.js';

/** The directories of a data dir copied beside the database (the audit signing keys, the TLS certificate and key). */
const KEPT_DIRS = ['audit-keys', 'tls'] as const;

export interface BackupResult {
  /** the destination data directory */
  dir: string;
  files: Array<{ file: string; bytes: number }>;
  /** how long svc.db's write lock was held, and the whole copy */
  lock_ms: number;
  ms: number;
  /** the attached files' `backupFacts`, read in the copied snapshot (between `files` and `lock_ms` in the JSON) */
  [fact: string]: number | string | Array<{ file: string; bytes: number }>;
}

/**
 * Copies the SQLite store of `dataDir` into `dest` (created 0700; it must not already hold a
 * database) as of one instant, while the service may run. Throws a StoreError (`invalid_config`)
 * for a data directory that holds no store of this version, or a destination that is in use, and
 * (`busy`) when another writer holds svc.db longer than `busyTimeoutMs` (default 10 s).
 */
export async function backupSqliteDataDir(dataDir: string, dest: string, opts: { busyTimeoutMs?: number } = {}): Promise<BackupResult> {
  const started = performance.now();
  const timeout = opts.busyTimeoutMs ?? 10_000;
  const attached = storage.sqliteFiles();
  // svc.db (schema main) first, then each attached file: the checks, copies and clean-up below go over this list.
  const schemas = ['main', ...attached.map((f) => f.schema)];
  const names = [SQLITE_FILE_NAME, ...attached.map((f) => f.file)];
  const src = join(dataDir, SQLITE_FILE_NAME);
  for (const f of names.map((n) => join(dataDir, n)))
    if (!existsSync(f))
      throw new StoreError('invalid_config', `${f} does not exist: not the data directory of a store that svc serve has opened`);
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  const outs = names.map((n) => join(dest, n));
  const taken = [...outs.flatMap((f) => [f, `${f}-wal`, `${f}-shm`]), ...KEPT_DIRS.map((d) => join(dest, d))].filter((f) => existsSync(f));
  if (taken.length > 0)
    throw new StoreError('invalid_config', `${dest} already holds ${taken.join(', ')}: refusing to overwrite; choose an empty directory`);
  // 0600 before SQLite writes them (the -wal and -shm files inherit the mode, as in sqlite-store.ts).
  for (const f of outs) closeSync(openSync(f, 'wx', 0o600));
  const reader = new BetterSqlite3(src, { fileMustExist: true, timeout });
  let done = false;
  try {
    for (const f of attached) reader.prepare(`attach database ? as ${f.schema}`).run(join(dataDir, f.file));
    for (const f of attached) f.backupCheck?.(reader, join(dataDir, f.file), dataDir);
    const lock = new BetterSqlite3(src, { fileMustExist: true, timeout });
    const lockStarted = performance.now();
    const facts: Record<string, number> = {};
    try {
      lock.exec('begin');
      try {
        lock.prepare(SVC_DB_LOCK).run();
      } catch (err) {
        if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
          throw new StoreError(
            'busy',
            `${src}: another writer held the database for ${timeout} ms (a long transaction, or another process on the file); ` +
              `nothing was copied, try again`,
          );
        }
        throw err;
      }
      reader.exec('begin');
      // A file's snapshot is fixed by the transaction's first read of it: every file is read while the lock is held.
      for (const schema of schemas) reader.prepare(`select count(*) from ${schema}.sqlite_master`).get();
      for (const f of attached)
        for (const [k, v] of Object.entries(f.backupFacts?.(reader) ?? {})) {
          if (k in facts || ['dir', 'files', 'lock_ms', 'ms'].includes(k)) throw new Error(`backup fact ${k} is in the result already`);
          facts[k] = v;
        }
    } finally {
      if (lock.inTransaction) lock.exec('rollback');
      lock.close();
    }
    const lockMs = performance.now() - lockStarted;
    for (const [i, schema] of schemas.entries()) await backupSchema(reader, schema, outs[i] as string);
    reader.exec('commit');
    for (const d of KEPT_DIRS)
      if (existsSync(join(dataDir, d)))
        cpSync(join(dataDir, d), join(dest, d), { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
    done = true;
    return {
      dir: dest,
      files: [...outs, ...KEPT_DIRS.flatMap((d) => filesUnder(join(dest, d)))].map((file) => ({
        file,
        bytes: statSync(file).size,
      })),
      ...facts,
      lock_ms: Math.round(lockMs * 10) / 10,
      ms: Math.round(performance.now() - started),
    };
  } finally {
    if (reader.open) reader.close();
    // Nothing half-written is left to be mistaken for a backup (the key directories were absent before: checked above).
    if (!done) {
      for (const f of outs.flatMap((x) => [x, `${x}-wal`, `${x}-shm`])) if (existsSync(f)) unlinkSync(f);
      for (const d of KEPT_DIRS) rmSync(join(dest, d), { recursive: true, force: true });
    }
  }
}

/**
 * better-sqlite3's online backup of one schema of the connection (its `attached` option, documented and in lib/methods/backup.js, missing
 * from @types/better-sqlite3).
 */
function backupSchema(db: BetterSqlite3.Database, schema: string, file: string): Promise<unknown> {
  return (db.backup as unknown as (file: string, options: { attached: string }) => Promise<unknown>).call(db, file, { attached: schema });
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}
