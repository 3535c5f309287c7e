/**
 * Who holds a data directory (issue 30 item 2): `svc serve` holds `<data-dir>/serve.lock` shared
 * for as long as it runs, and `svc keys rotate` needs it exclusive, so a rotation never runs beside
 * a server that keeps the active key in memory (it would go on signing with the key the keyring has
 * just retired).
 *
 * The lock is SQLite's own file lock on a tiny database in rollback-journal mode: a server keeps a
 * read transaction open (a SHARED lock; several servers may hold it, as replicas of one Postgres
 * database may share a directory), and the rotation asks for an EXCLUSIVE lock with no wait, which
 * SQLite refuses while any SHARED lock is held. The operating system drops the locks of a process
 * that ends, however it ends, so a killed server leaves nothing stale behind (unlike a pid file).
 * `serve.lock` also records the last server's pid and start time, only for the refusal's message.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** The lock file's name inside the data directory. */
export const DATA_DIR_LOCK_FILE = 'serve.lock';

/** A held lock; `release` is idempotent. */
export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/** Thrown when the lock cannot be had; `holder` describes who holds it, when known. */
export class DataDirBusyError extends Error {
  override readonly name = 'DataDirBusyError';
  constructor(readonly file: string, readonly holder: string | null, message: string) {
    super(message);
  }
}

type Db = InstanceType<typeof BetterSqlite3>;

function open(file: string, timeoutMs: number): Db {
  const db = new BetterSqlite3(file, { timeout: timeoutMs });
  try {
    // Rollback journal: a reader's SHARED lock keeps a writer's EXCLUSIVE lock out (WAL would not).
    db.pragma('journal_mode = DELETE');
    db.exec('create table if not exists holder (id integer primary key check (id = 1), pid integer not null, started_at text not null)');
  } catch (err) {
    // Created by another process that holds it now: the table is there already.
    if (!isBusy(err)) {
      db.close();
      throw err;
    }
  }
  return db;
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/** The pid and start time the last server wrote, for a message. */
function describeHolder(db: Db): string | null {
  try {
    const row = db.prepare('select pid, started_at from holder where id = 1').get() as { pid: number; started_at: string } | undefined;
    return row === undefined ? null : `pid ${row.pid}, started ${row.started_at}`;
  } catch {
    return null;
  }
}

/**
 * `svc serve`: hold the data directory shared while the server runs. Waits up to `timeoutMs` for
 * a rotation in progress to finish, then throws {@link DataDirBusyError}.
 */
export function holdDataDirShared(dataDir: string, timeoutMs = 10_000): DataDirLock {
  const file = join(dataDir, DATA_DIR_LOCK_FILE);
  const db = open(file, 0);
  try {
    // Who holds it, for the rotation's message; skipped while another server holds it too.
    db.prepare(
      'insert into holder (id, pid, started_at) values (1, ?, ?) on conflict (id) do update set pid = excluded.pid, started_at = ' +
        'excluded.started_at',
    ).run(process.pid, new Date().toISOString());
  } catch (err) {
    if (!isBusy(err)) {
      db.close();
      throw err;
    }
  }
  try {
    // A read transaction that stays open: SQLite holds the file's SHARED lock until it ends.
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
    db.exec('begin');
    db.prepare('select count(*) from holder').get();
  } catch (err) {
    db.close();
    if (isBusy(err))
      throw new DataDirBusyError(
        file,
        null,
        `the data directory ${dataDir} is held by another process (svc keys rotate running on it?); ${file} stayed locked for ` +
          `${timeoutMs} ms`,
      );
    throw err;
  }
  let held = true;
  return {
    file,
    release: () => {
      if (!held) return;
      held = false;
      try {
        db.exec('rollback');
      } finally {
        db.close();
      }
    },
  };
}

/**
 * `svc keys rotate`: hold the data directory exclusively, at once or not at all. Throws
 * {@link DataDirBusyError} while any `svc serve` holds it.
 */
export function holdDataDirExclusive(dataDir: string): DataDirLock {
  const file = join(dataDir, DATA_DIR_LOCK_FILE);
  const db = open(file, 0);
  try {
    db.exec('begin exclusive');
  } catch (err) {
    const holder = describeHolder(db);
    db.close();
    if (isBusy(err)) {
      throw new DataDirBusyError(
        file,
        holder,
        `svc serve is running on the data directory ${dataDir}${holder === null ? '' : ` (${holder})`}: it holds ${file}; stop it first`,
      );
    }
    throw err;
  }
  let held = true;
  return {
    file,
    release: () => {
      if (!held) return;
      held = false;
      try {
        db.exec('rollback');
      } finally {
        db.close();
      }
    },
  };
}
