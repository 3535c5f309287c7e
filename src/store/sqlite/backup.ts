/**
 * `svc backup`: a copy of a SQLite data directory as of one instant, taken while `svc serve` runs
 * (docs/storage.md "Backups").
 *
 * The database is two files, svc.db and the edge file (edge-file.ts), and copying them one after
 * the other is not a copy of one instant: observations committed between the two copies and merged
 * into the edge file would name nodes the svc.db copy lacks (or, in the other order, rows merged and
 * removed from the recent level between the copies would be lost). So:
 *
 * 1. A second connection takes svc.db's write lock the way the store's transactions do (`BEGIN` and
 *    a write that changes nothing, sqlite-dialect.ts `SVC_DB_LOCK`): from here until step 3 no
 *    transaction of the service commits to svc.db, so no row enters or leaves the recent level.
 *    The merge worker may go on writing the edge file; a merge moves rows from the level into the
 *    edges and its mark past them, and removes nothing from svc.db.
 * 2. A read transaction on a third connection, with the edge file attached, reads both files: its
 *    snapshots of svc.db and of the edge file are now fixed. What the edge snapshot holds beyond
 *    svc.db's is only rows of the svc.db snapshot's level merged at or below its mark, which the
 *    next start removes from the level (counted once, as after a crash between a merge and the
 *    removal).
 * 3. The lock is released (held for a few milliseconds; the service's writers wait for it, as for
 *    any transaction, up to their busy timeout).
 * 4. SQLite's online backup copies each file from that read transaction's snapshot, while the
 *    service goes on writing; then the keys (`audit-keys/`) and the TLS certificate (`tls/`) are
 *    copied, so the destination is a data directory `svc serve --data-dir` starts on.
 */
import BetterSqlite3 from 'better-sqlite3';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { EDGE_FILE_NAME, EDGE_SCHEMA, checkEdgeFile, hasTable } from './edge-file.js';
import { SVC_DB_LOCK } from './sqlite-dialect.js';
import { SQLITE_FILE_NAME } from './sqlite-store.js';
import { StoreError } from '../store-error.js';

/** The directories of a data dir copied beside the database (the audit signing keys, the TLS certificate and key). */
const KEPT_DIRS = ['audit-keys', 'tls'] as const;

export interface BackupResult {
  /** the destination data directory */
  dir: string;
  files: Array<{ file: string; bytes: number }>;
  /** rows of the access map's recent level in the copy, and the edge file's mark (the level's seq up to which the edges hold it) */
  recent_level_rows: number;
  merged_up_to: number;
  /** how long svc.db's write lock was held, and the whole copy */
  lock_ms: number;
  ms: number;
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
  const src = join(dataDir, SQLITE_FILE_NAME);
  const srcEdges = join(dataDir, EDGE_FILE_NAME);
  for (const f of [src, srcEdges])
    if (!existsSync(f))
      throw new StoreError('invalid_config', `${f} does not exist: not the data directory of a store that svc serve has opened`);
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  const outDb = join(dest, SQLITE_FILE_NAME);
  const outEdges = join(dest, EDGE_FILE_NAME);
  const taken = [...[outDb, outEdges].flatMap((f) => [f, `${f}-wal`, `${f}-shm`]), ...KEPT_DIRS.map((d) => join(dest, d))].filter((f) =>
    existsSync(f),
  );
  if (taken.length > 0)
    throw new StoreError('invalid_config', `${dest} already holds ${taken.join(', ')}: refusing to overwrite; choose an empty directory`);
  // 0600 before SQLite writes them (the -wal and -shm files inherit the mode, as in sqlite-store.ts).
  for (const f of [outDb, outEdges]) closeSync(openSync(f, 'wx', 0o600));
  const reader = new BetterSqlite3(src, { fileMustExist: true, timeout });
  let done = false;
  try {
    reader.prepare(`attach database ? as ${EDGE_SCHEMA}`).run(srcEdges);
    if (!checkEdgeFile(reader, srcEdges) || !hasTable(reader, EDGE_SCHEMA, 'access_edges')) {
      throw new StoreError(
        'invalid_config',
        `${dataDir}: the access map's edges are not in ${EDGE_FILE_NAME} yet; start svc serve once (it moves them) and back up again`,
      );
    }
    const lock = new BetterSqlite3(src, { fileMustExist: true, timeout });
    const lockStarted = performance.now();
    let level = 0;
    let mark = 0;
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
      level = Number((reader.prepare('select count(*) as n from main.access_edges_recent').get() as { n: number }).n);
      mark = Number((reader.prepare(`select up_to from ${EDGE_SCHEMA}.access_edges_merged`).get() as { up_to: number }).up_to);
    } finally {
      if (lock.inTransaction) lock.exec('rollback');
      lock.close();
    }
    const lockMs = performance.now() - lockStarted;
    await backupSchema(reader, 'main', outDb);
    await backupSchema(reader, EDGE_SCHEMA, outEdges);
    reader.exec('commit');
    for (const d of KEPT_DIRS)
      if (existsSync(join(dataDir, d)))
        cpSync(join(dataDir, d), join(dest, d), { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
    done = true;
    return {
      dir: dest,
      files: [outDb, outEdges, ...KEPT_DIRS.flatMap((d) => filesUnder(join(dest, d)))].map((file) => ({
        file,
        bytes: statSync(file).size,
      })),
      recent_level_rows: level,
      merged_up_to: mark,
      lock_ms: Math.round(lockMs * 10) / 10,
      ms: Math.round(performance.now() - started),
    };
  } finally {
    if (reader.open) reader.close();
    // Nothing half-written is left to be mistaken for a backup (the key directories were absent before: checked above).
    if (!done) {
      for (const f of [outDb, outEdges].flatMap((x) => [x, `${x}-wal`, `${x}-shm`])) if (existsSync(f)) unlinkSync(f);
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
