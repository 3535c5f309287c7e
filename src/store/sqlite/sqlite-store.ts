import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, type Transaction } from 'kysely';
import { errorText, latestVersion, readinessOf, runMigrations, type MigrationResult } from '../migrations.js';
import type { Database, MigrationDatabase } from '../schema.js';
import type { SqliteHandle, Store, StoreCapabilities, StoreConfig, StoreLog, StoreReadiness } from '../store.js';
import { StoreError } from '../store-error.js';
import { assertTenantId } from '../tenant-id.js';
import { createSqliteDialect } from './sqlite-dialect.js';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';

/** File name of the embedded database inside the data directory. */
export const SQLITE_FILE_NAME = 'svc.db';

const CAPABILITIES: StoreCapabilities = Object.freeze({
  supportsRls: false,
  // One better-sqlite3 connection; Kysely's driver mutex serialises every transaction.
  supportsConcurrentWriters: false,
  supportsAdvisoryLocks: false,
  supportsReturning: true,
});

/** Transactions a SqliteStore opened and has not finished: `sqliteHandle` answers only for these. */
const openTransactions = new WeakSet<Transaction<Database>>();

/** The embedded single-node store: `<dataDir>/svc.db`, WAL, one writer connection. */
class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  readonly capabilities = CAPABILITIES;
  #closed = false;

  constructor(
    readonly db: Kysely<Database>,
    private readonly log: StoreLog,
    private readonly sqlite: BetterSqlite3.Database,
  ) {}

  #open(): void {
    if (this.#closed) throw new StoreError('store_closed', 'store is closed');
  }

  async migrate(): Promise<MigrationResult> {
    this.#open();
    const result = await runMigrations(this.db as unknown as Kysely<MigrationDatabase>, SQLITE_MIGRATIONS, {
      // BEGIN IMMEDIATE already holds the only write lock a SQLite file has.
      lock: async () => {},
    });
    if (result.applied.length > 0) this.log.info({ applied: result.applied, current: result.current }, 'store migrations applied');
    return result;
  }

  async readiness(): Promise<StoreReadiness> {
    const expected = latestVersion(SQLITE_MIGRATIONS);
    if (this.#closed) return { ok: false, reachable: false, migrations: { current: 0, expected }, error: 'store is closed' };
    try {
      const table = await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = 'schema_migrations'`.execute(this.db);
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
    return this.db.transaction().execute((tx) => tracked(tx, fn));
  }

  async withTenant<T>(tenantId: string, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
    assertTenantId(tenantId);
    this.#open();
    // No RLS in SQLite (capabilities.supportsRls = false): confinement rests on the queries' filters.
    return this.db.transaction().execute((tx) => tracked(tx, fn));
  }

  // No private fields here: callers may hand on a view of the store (`Object.create(store)`).
  sqliteHandle(tx: Transaction<Database>): SqliteHandle | undefined {
    return openTransactions.has(tx) ? (this.sqlite as unknown as SqliteHandle) : undefined;
  }

  async sqliteTransaction<T>(fn: (db: SqliteHandle) => T): Promise<T> {
    this.#open();
    // Holding Kysely's connection (its single-connection mutex) keeps every other transaction out.
    return this.db.connection().execute(async () => this.sqlite.transaction(() => fn(this.sqlite as unknown as SqliteHandle)).immediate());
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
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

/** Opens (creating if needed) `<dataDir>/svc.db` with the pragmas the service relies on. */
export async function openSqliteStore(config: StoreConfig, log: StoreLog): Promise<Store> {
  const synchronous = config.sqliteSynchronous ?? 'full';
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new StoreError('invalid_config', `sqlite synchronous must be full or normal, got ${String(synchronous)}`);
  }
  const busyTimeoutMs = config.busyTimeoutMs ?? 5000;
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = join(config.dataDir, SQLITE_FILE_NAME);
  // Create the file 0600 before SQLite does: the -wal and -shm files inherit its mode
  // (SQLite unix VFS, robust_open / findCreateFileMode), so tenant data is never world-readable.
  closeSync(openSync(file, 'a', 0o600));
  const sqlite = new BetterSqlite3(file, { timeout: busyTimeoutMs });
  try {
    const mode = sqlite.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') {
      throw new StoreError('invalid_config', `${file}: cannot enable WAL (journal_mode=${String(mode)}); is the data dir on a network file system?`);
    }
    // FULL in WAL mode fsyncs the WAL on every commit: a commit the ledger acknowledged as durable
    // survives power loss. NORMAL is crash-safe for the process but may lose the last commits on
    // power loss (https://sqlite.org/pragma.html#pragma_synchronous); group commit amortises the fsync.
    sqlite.pragma(`synchronous = ${synchronous}`);
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: createSqliteDialect({ database: sqlite }) });
  log.info({ store: 'sqlite', file, journal_mode: 'wal', synchronous }, 'store opened');
  return new SqliteStore(db, log, sqlite);
}
