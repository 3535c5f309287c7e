import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, type Transaction } from 'kysely';
import { errorText, latestVersion, readinessOf, runMigrations, type MigrationResult } from '../migrations.js';
import type { SqliteAttachedFile } from '../module-storage.js';
import type { Database, MigrationDatabase } from '../schema.js';
import type {
  SqliteFiles,
  SqliteHandle,
  SqliteWriter,
  Store,
  StoreCapabilities,
  StoreConfig,
  StoreLog,
  StoreReadiness,
} from '../store-types.js';
import { StoreError } from '../store-error.js';
import { assertTenantId } from '../tenant-id.js';
import { currentIntentScope, withIntentMarker, type ChangeProbe, type IntentScope } from '../../ledger/audit-intent.js';
import { createSqliteDialect, SVC_DB_LOCK, type BeginMode } from './sqlite-dialect.js';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';
import { checkSqliteCacheMib, DEFAULT_SQLITE_CACHE_MIB } from './sqlite-cache.js';
import { attachFile } from './attached-files.js';
import { storage } from '../../storage.js';
import { WalSync } from './wal-sync.js';
import { cachedStatements } from './statement-cache.js';

/** File name of the embedded database inside the data directory. */
export const SQLITE_FILE_NAME = 'svc.db';

const CAPABILITIES: StoreCapabilities = Object.freeze({
  supportsRls: false,
  // One better-sqlite3 connection; Kysely's driver mutex serialises every transaction.
  supportsConcurrentWriters: false,
  supportsAdvisoryLocks: false,
  supportsReturning: true,
});

/** Transactions one group commit takes at most, and how long it keeps taking new ones. */
const GROUP_MAX = 256;
const GROUP_MAX_MS = 8;

interface Job {
  fn: (tx: Transaction<Database>) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  ok?: boolean;
  value?: unknown;
  error?: unknown;
  /** the mutating request that asked for this transaction, if any (ledger/audit-intent.ts) */
  scope?: IntentScope | undefined;
  /** told at COMMIT, before the fsync: the body wrote a change marker, so an audit record follows */
  early?: boolean;
}

/** Transactions a SqliteStore opened and has not finished: `sqlite.handle` answers only for these. */
const openTransactions = new WeakSet<Transaction<Database>>();

/**
 * The embedded single-node store: `<dataDir>/svc.db`, WAL, one writer connection.
 *
 * Group commit: SQLite has one writer and `synchronous=FULL` fsyncs every commit, so one transaction
 * per request would cap writes at the disk's fsync rate (about a thousand per second here). Concurrent
 * `transaction`/`withTenant` calls therefore share one `BEGIN … COMMIT` (holding svc.db's write lock
 * from its start, sqlite-dialect.ts; never an attached file's, module-storage.ts): each runs in its
 * own SAVEPOINT, in arrival order; one that throws is rolled back to its savepoint alone (the others
 * keep their writes), and nobody's promise settles before the shared COMMIT has returned. A lone
 * transaction commits at once (the group closes as soon as nobody is waiting), so this adds no
 * latency. A later member sees the writes of earlier members of its group, exactly as it would had
 * they committed first; if the COMMIT itself fails, every member of the group fails.
 *
 * Durability off the event loop (wal-sync.ts): with `synchronous` full (the default) the connection
 * runs at NORMAL and the store fsyncs the WAL on libuv's thread pool after each COMMIT; the group's
 * callers settle only once that fsync has returned, while the next group already runs on the main
 * thread. Commits that land during one fsync share the next.
 */
class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  readonly capabilities = CAPABILITIES;
  #closed = false;
  readonly #queue: Job[] = [];
  #draining = false;
  /** `sqlite.transaction`/`sqlite.commit` calls running or waiting for the connection. */
  #direct = 0;
  /** When the writer last finished a transaction (performance.now()); its fsync included. */
  #lastWrite = 0;
  /** Commits whose fsync has not returned: their callers have not heard yet, so the writer is not idle. */
  #syncing = 0;
  readonly #idleWork = new Set<string>();
  readonly #closers: Array<() => Promise<void>> = [];
  #svcDbLock: BetterSqlite3.Statement | undefined;
  #totalChanges: BetterSqlite3.Statement | undefined;
  /** Whether a transaction body changed rows: the connection's change counter (audit-intent.ts). */
  readonly #changes: ChangeProbe = {
    kind: 'counter',
    read: () => Number((this.#totalChanges ??= this.connection.prepare('select total_changes()').pluck()).get()),
  };
  /**
   * The writer's capabilities (SqliteWriter); built once here with the methods bound, so a view of
   * the store (`Object.create(store)`) that callers hand on reaches the private state through it.
   */
  readonly sqlite: SqliteWriter;
  /** Resolves once every commit so far is on disk (see the class comment). */
  readonly #durable: () => Promise<void>;

  constructor(
    readonly db: Kysely<Database>,
    private readonly log: StoreLog,
    private readonly connection: BetterSqlite3.Database,
    private readonly beginMode: BeginMode,
    files: SqliteFiles,
    readonly walSync: WalSync | undefined,
    private readonly attached: readonly SqliteAttachedFile[],
  ) {
    this.#durable =
      walSync === undefined
        ? () => Promise.resolve()
        : () => {
            this.#syncing++;
            return walSync.sync().finally(() => {
              this.#syncing--;
              this.#lastWrite = performance.now();
            });
          };
    this.sqlite = Object.freeze({
      transaction: <T>(fn: (db: SqliteHandle) => T) => this.#transaction(fn),
      commit: <T>(fn: (db: SqliteHandle) => T) => this.#commit(fn),
      handle: (tx: Transaction<Database>) => (openTransactions.has(tx) ? (this.connection as unknown as SqliteHandle) : undefined),
      whenIdle: (key: string, idleMs: number, fn: (db: SqliteHandle) => boolean) => this.#whenIdle(key, idleMs, fn),
      onClose: (fn: () => Promise<void>) => void this.#closers.push(fn),
      files: Object.freeze({ ...files }),
    });
  }

  #whenIdle(key: string, idleMs: number, fn: (db: SqliteHandle) => boolean): void {
    if (this.#closed || this.#idleWork.has(key)) return;
    this.#idleWork.add(key);
    const check = (): void => {
      if (this.#closed) return void this.#idleWork.delete(key);
      if (
        this.#draining ||
        this.#queue.length > 0 ||
        this.#direct > 0 ||
        this.#syncing > 0 ||
        performance.now() - this.#lastWrite < idleMs
      )
        return void setTimeout(check, idleMs).unref();
      this.#transaction(fn).then(
        (again) => (again && !this.#closed ? void setTimeout(check, idleMs).unref() : void this.#idleWork.delete(key)),
        (err: unknown) => {
          this.#idleWork.delete(key);
          if (!this.#closed) this.log.warn({ key, err: errorText(err) }, 'store idle work failed; it runs again when next scheduled');
        },
      );
    };
    setTimeout(check, idleMs).unref();
  }

  #open(): void {
    if (this.#closed) throw new StoreError('store_closed', 'store is closed');
    const failed = this.walSync?.failed;
    if (failed !== undefined) throw new StoreError('store_failed', failed.message);
  }

  async migrate(): Promise<MigrationResult> {
    this.#open();
    const result = await runMigrations(this.db as unknown as Kysely<MigrationDatabase>, SQLITE_MIGRATIONS, {
      // The transaction already holds svc.db's write lock, the only one a SQLite file has.
      lock: async () => {},
    });
    if (result.applied.length > 0) this.log.info({ applied: result.applied, current: result.current }, 'store migrations applied');
    // After the migrations: each attached file takes what they built for it in svc.db (module-storage.ts `afterMigrate`).
    for (const f of this.attached) {
      if (f.afterMigrate === undefined) continue;
      const done = await this.db.connection().execute(async () => f.afterMigrate?.(this.connection));
      if (done !== undefined) this.log.info(done.fields, done.msg);
    }
    // Every attached file holds its tables now: svc.db's transactions lock svc.db alone.
    if (this.attached.length > 0) this.beginMode.svcDbOnly = true;
    return result;
  }

  async readiness(): Promise<StoreReadiness> {
    const expected = latestVersion(SQLITE_MIGRATIONS);
    if (this.#closed) return { ok: false, reachable: false, migrations: { current: 0, expected }, error: 'store is closed' };
    try {
      const table = await sql<{
        n: number;
      }>`select count(*) as n from sqlite_master where type = 'table' and name = 'schema_migrations'`.execute(this.db);
      let current = 0;
      if (Number(table.rows[0]?.n) > 0) {
        const row = await sql<{ v: number | null }>`select max(version) as v from schema_migrations`.execute(this.db);
        current = Number(row.rows[0]?.v ?? 0);
      }
      return readinessOf(current, expected);
    } catch (err) {
      return { ok: false, reachable: false, migrations: { current: 0, expected }, error: errorText(err) };
    }
  }

  async transaction<T>(fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
    this.#open();
    return this.#grouped(withIntentMarker(null, fn, this.#changes));
  }

  async withTenant<T>(tenantId: string, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
    assertTenantId(tenantId);
    this.#open();
    // No RLS in SQLite (capabilities.supportsRls = false): confinement rests on the queries' filters.
    return this.#grouped(withIntentMarker(tenantId, fn, this.#changes));
  }

  #grouped<T>(fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, scope: currentIntentScope() });
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      do {
        await this.#commitGroup();
        // One turn of the event loop before the next group (or before stopping): the callers this
        // group just released, and requests that arrived during its COMMIT, queue up meanwhile and
        // share the next group. Starting it in the same microtask chain would give groups of one
        // and starve I/O.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } while (this.#queue.length > 0);
    } finally {
      this.#draining = false;
    }
  }

  /** One BEGIN … COMMIT over the transactions queued now and while it runs. */
  async #commitGroup(): Promise<void> {
    const members: Job[] = [];
    let failure: unknown;
    try {
      const trx = await this.db.startTransaction().execute();
      try {
        const started = performance.now();
        while (
          this.#queue.length > 0 &&
          members.length < GROUP_MAX &&
          (members.length === 0 || performance.now() - started < GROUP_MAX_MS)
        ) {
          const job = this.#queue.shift() as Job;
          members.push(job);
          const sp = await trx.savepoint('member').execute();
          const opened = job.scope?.open;
          try {
            job.value = await tracked(sp, job.fn);
            await sp.releaseSavepoint('member').execute();
            job.ok = true;
            job.early = job.scope !== undefined && job.scope.open !== opened;
          } catch (err) {
            job.error = err;
            await sp.rollbackToSavepoint('member').execute();
            await sp.releaseSavepoint('member').execute();
          }
        }
        await trx.commit().execute();
        this.#lastWrite = performance.now();
      } catch (err) {
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
        throw err;
      }
    } catch (err) {
      // BEGIN, a savepoint statement or COMMIT failed: nothing of the group is stored.
      failure = err;
    }
    if (members.length === 0 && failure !== undefined) members.push(this.#queue.shift() as Job);
    const settle = (): void => {
      for (const job of members) {
        if (failure !== undefined) job.reject(job.ok === false || job.ok === undefined ? (job.error ?? failure) : failure);
        else if (job.ok === true) job.resolve(job.value);
        else job.reject(job.error);
      }
    };
    if (failure !== undefined) return settle();
    // Nobody hears of the group before its COMMIT is on disk, the next group does not wait for that
    // (wal-sync.ts). Except a change of a mutating request (it wrote its audit marker): that request
    // goes on at once to append its audit record, whose own commit and fsync come later and cover
    // this one; the request's answer also waits for this fsync (scope.unsynced, serve/audit-scope.ts).
    // Nothing leaves the process before the fsync either way, and a crash in between leaves the
    // change with its marker, as before (audit-intent.ts).
    const durable = this.#durable();
    let late = false;
    for (const job of members) {
      if (job.early === true && job.scope !== undefined) {
        const prev = job.scope.unsynced;
        job.scope.unsynced = prev === undefined ? durable : Promise.all([prev, durable]).then(() => undefined);
        job.scope.unsynced.catch(() => undefined);
        job.resolve(job.value);
      } else late = true;
    }
    if (!late) return void durable.catch(() => undefined);
    const rest = members.filter((job) => job.early !== true || job.scope === undefined);
    const settleRest = (): void => {
      for (const job of rest) {
        if (failure !== undefined) job.reject(job.ok === true ? failure : (job.error ?? failure));
        else if (job.ok === true) job.resolve(job.value);
        else job.reject(job.error);
      }
    };
    durable.then(settleRest, (err: unknown) => {
      failure = err;
      settleRest();
    });
  }

  async #transaction<T>(fn: (db: SqliteHandle) => T): Promise<T> {
    const { value, durable } = await this.#commit(fn);
    await durable;
    return value;
  }

  async #commit<T>(fn: (db: SqliteHandle) => T): Promise<{ value: T; durable: Promise<void> }> {
    this.#open();
    this.#direct++;
    try {
      // Holding Kysely's connection (its single-connection mutex) keeps every other transaction out.
      // svc.db's write lock from the start (sqlite-dialect.ts BeginMode): IMMEDIATE, or once the attached
      // files hold their tables, a no-op write to svc.db first, so their writers are not waited for.
      const sqlite = this.connection;
      const value = await this.db.connection().execute(async () => {
        if (!this.beginMode.svcDbOnly) return sqlite.transaction(() => fn(sqlite as unknown as SqliteHandle)).immediate();
        return sqlite
          .transaction(() => {
            (this.#svcDbLock ??= sqlite.prepare(SVC_DB_LOCK)).run();
            return fn(sqlite as unknown as SqliteHandle);
          })
          .deferred();
      });
      const durable = this.#durable();
      // The caller may drop it after a failure elsewhere; the rejection is theirs to see, not unhandled.
      durable.catch(() => undefined);
      return { value, durable };
    } finally {
      this.#direct--;
      this.#lastWrite = performance.now();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled(this.#closers.map((fn) => fn()));
    await this.walSync?.close();
    await this.db.destroy();
  }
}

async function tracked<T>(tx: Transaction<Database>, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  openTransactions.add(tx);
  try {
    return await fn(tx);
  } finally {
    openTransactions.delete(tx);
  }
}

/** The page cache of `config` in MiB (a StoreError for a value out of range). */
function sqliteCacheMib(config: StoreConfig): number {
  try {
    return checkSqliteCacheMib(config.sqliteCacheMib ?? DEFAULT_SQLITE_CACHE_MIB);
  } catch (err) {
    throw new StoreError('invalid_config', (err as Error).message);
  }
}

/** Opens (creating if needed) `<dataDir>/svc.db` with the pragmas the service relies on. */
export async function openSqliteStore(config: StoreConfig, log: StoreLog): Promise<Store> {
  const synchronous = config.sqliteSynchronous ?? 'full';
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new StoreError('invalid_config', `sqlite synchronous must be full or normal, got ${String(synchronous)}`);
  }
  const busyTimeoutMs = config.busyTimeoutMs ?? 5000;
  const cacheMib = sqliteCacheMib(config);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = join(config.dataDir, SQLITE_FILE_NAME);
  // Create the file 0600 before SQLite does: the -wal and -shm files inherit its mode
  // (SQLite unix VFS, robust_open / findCreateFileMode), so tenant data is never world-readable.
  closeSync(openSync(file, 'a', 0o600));
  const sqlite = new BetterSqlite3(file, { timeout: busyTimeoutMs });
  const beginMode: BeginMode = { svcDbOnly: false };
  const attached = storage.sqliteFiles();
  try {
    const mode = sqlite.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') {
      throw new StoreError(
        'invalid_config',
        `${file}: cannot enable WAL (journal_mode=${String(mode)}); is the data dir on a network file system?`,
      );
    }
    // FULL: a commit the store acknowledged survives power loss. SQLite's own FULL would fsync the WAL
    // inside every COMMIT, on the main thread; the store instead runs svc.db at NORMAL and fsyncs the
    // WAL itself on the thread pool before it settles a commit's callers (wal-sync.ts). NORMAL as
    // configured is crash-safe for the process but may lose the last commits on power loss
    // (https://sqlite.org/pragma.html#pragma_synchronous): no fsync is awaited then.
    sqlite.pragma('main.synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // A rewritten or deleted row's old bytes are zeroed in its page when that costs no extra I/O
    // (https://sqlite.org/pragma.html#pragma_secure_delete), so an erasure finds no stale copy of
    // text updated long before it (docs/compliance.md "The bytes are gone"); before ATTACH: attached
    // files inherit it.
    sqlite.pragma('secure_delete = FAST');
    // One page cache for every transaction on the connection, large merges of the access map's
    // recent level included (docs/storage.md "SQLite"): a cap, filled only as pages are read, so
    // a small database never reaches it.
    sqlite.pragma(`cache_size = -${cacheMib * 1024}`);
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
    // The areas' files beside svc.db (module-storage.ts SqliteAttachedFile), checked before anything reads them.
    const paths = attached.map((f) => attachFile(sqlite, config.dataDir, f, { synchronous, cacheMib }));
    const ready = attached.map((f, i) => f.check(sqlite, paths[i] as string));
    beginMode.svcDbOnly = ready.length > 0 && ready.every(Boolean);
    for (const [i, f] of attached.entries()) if (ready[i] === true) f.afterOpen?.(sqlite);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  // Kysely prepares every query anew; the same texts come back on every request (statement-cache.ts).
  const db = new Kysely<Database>({ dialect: createSqliteDialect({ database: cachedStatements(sqlite) }, beginMode) });
  log.info(
    {
      store: 'sqlite',
      file,
      journal_mode: 'wal',
      synchronous,
      cache_mib: cacheMib,
      wal_fsync: synchronous === 'full' ? 'thread-pool' : 'none',
    },
    'store opened',
  );
  const walSync = synchronous === 'full' ? new WalSync(`${file}-wal`) : undefined;
  const files: SqliteFiles = { dataDir: config.dataDir, dbFile: file, synchronous, cacheMib, busyTimeoutMs };
  return new SqliteStore(db, log, sqlite, beginMode, files, walSync, attached);
}
