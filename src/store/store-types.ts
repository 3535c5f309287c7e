/** The Store contract every backend implements (types only; `store.ts` opens one). */
import type { Transaction } from 'kysely';
import type { Database } from './schema.js';

/** Which database engine backs a store. */
export type StoreBackend = 'sqlite' | 'postgres';

/** Named differences between backends; callers branch on these, never on `backend` (STYLE rule 4). */
export interface StoreCapabilities {
  /** tenant rows are confined by the database itself (row-level security), not only by query filters */
  supportsRls: boolean;
  /** more than one transaction can write at the same time (SQLite: one writer connection) */
  supportsConcurrentWriters: boolean;
  /** `pg_advisory_xact_lock` and friends, e.g. one ledger-chain writer across replicas */
  supportsAdvisoryLocks: boolean;
  /** `INSERT … RETURNING` / `UPDATE … RETURNING` */
  supportsReturning: boolean;
}

/** Result of a readiness probe; `/readyz` reports it. */
export interface StoreReadiness {
  ok: boolean;
  reachable: boolean;
  migrations: { current: number; expected: number };
  error?: string;
}

/** The asynchronous storage contract both backends implement (ARCHITECTURE.md "Storage"). */
export interface Store {
  readonly backend: StoreBackend;
  readonly capabilities: StoreCapabilities;
  /** applies pending migrations; refuses (`schema_too_new`) a database migrated by a newer binary */
  migrate(): Promise<{ applied: number[]; current: number }>;
  /** readiness: reachable and every known migration applied; never throws */
  readiness(): Promise<StoreReadiness>;
  /** a transaction over global (non-tenant) tables only; tenant tables fail closed on Postgres */
  transaction<T>(fn: (tx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * a transaction bound to one tenant: on Postgres sets app.tenant_id (transaction-local) and the non-owner app role, so RLS confines every
   * statement
   */
  withTenant<T>(tenantId: string, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T>;
  /** releases the database; idempotent; later calls reject with `store_closed` */
  close(): Promise<void>;
  /** SQLite only, chosen at open (absent on Postgres): the writer connection's own capabilities. */
  readonly sqlite?: SqliteWriter;
}

/**
 * What a SQLite store offers beyond the contract: its one writer connection, for the few hot paths
 * where per-row query building costs more than the write, and for upkeep that must not hold up a
 * caller's commit; and the files and settings, for a module that keeps a file of its own beside svc.db.
 */
export interface SqliteWriter {
  /**
   * Runs `fn` synchronously on the writer connection inside one transaction that holds svc.db's
   * write lock from its start (rolled back if it throws), serialised with every other transaction.
   * Narrow on purpose: the ledger's batch commit (bench ledger-append).
   */
  transaction<T>(fn: (db: SqliteHandle) => T): Promise<T>;
  /**
   * `transaction` that resolves as soon as the COMMIT has returned, with `durable`, which resolves
   * once that commit is on disk (the WAL fsynced off the main thread, sqlite/wal-sync.ts). The
   * caller must not answer for anything of the transaction before `durable` resolves; meanwhile it
   * may start its next commit (the ledger pipeline does).
   */
  commit<T>(fn: (db: SqliteHandle) => T): Promise<{ value: T; durable: Promise<void> }>;
  /**
   * The connection under `tx` when `tx` is a transaction this store opened (`transaction`,
   * `withTenant`), else undefined. For a hot path that runs inside its caller's transaction (gRPC
   * ingest) and so cannot open `transaction`: statements run on the same connection, inside the
   * same transaction.
   */
  handle(tx: Transaction<Database>): SqliteHandle | undefined;
  /**
   * Background upkeep that must not hold up a caller's commit. Runs `fn` on the writer connection
   * in a transaction of its own once no transaction has run or waited for `idleMs`, checking again
   * every `idleMs` while the writer is busy; again after each run for as long as `fn` returns true.
   * One pending run per `key` (a second call while one is pending is a no-op). A failing run is
   * logged and dropped; a closed store drops it silently.
   */
  whenIdle(key: string, idleMs: number, fn: (db: SqliteHandle) => boolean): void;
  /** Runs `fn` when the store closes, before its connection is closed (a module's worker finishing its last write). */
  onClose(fn: () => Promise<void>): void;
  /** The store's files and settings, for a connection of a module's own on a file beside svc.db. */
  readonly files: SqliteFiles;
}

/** Where a SQLite store keeps its data and how it opened it. */
export interface SqliteFiles {
  /** the data directory (0700) */
  dataDir: string;
  /** `<dataDir>/svc.db` */
  dbFile: string;
  /** the configured `synchronous` (the store runs svc.db itself at NORMAL and fsyncs the WAL off the main thread) */
  synchronous: 'full' | 'normal';
  cacheMib: number;
  busyTimeoutMs: number;
}

/** The few better-sqlite3 calls {@link SqliteWriter} callers use (prepared statements). */
export interface SqliteHandle {
  prepare(source: string): SqliteStatement;
}

/** A prepared statement of {@link SqliteHandle} (better-sqlite3's); `raw(true)` makes it answer rows as arrays. */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  raw(on?: boolean): SqliteStatement;
  /** answer the first column's value instead of a row */
  pluck(on?: boolean): SqliteStatement;
  /** rows one at a time */
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

/** Minimal structured logger (pino-compatible). */
export interface StoreLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** How to open a store; the serve layer fills it from flags > `SERVICE_*` env > defaults. */
export interface StoreConfig {
  backend: StoreBackend;
  /** SQLite keeps `<dataDir>/svc.db` here (created 0700 if missing) */
  dataDir: string;
  /** Postgres connection string, required for `postgres` */
  dsn?: string;
  /** Postgres pool size (default 10) */
  poolSize?: number;
  /** Postgres role the service switches to per transaction (default `SERVICE_PG_APP_ROLE` or `svc_app`) */
  pgAppRole?: string;
  /** SQLite `synchronous` pragma (default `full`: an acknowledged commit survives power loss) */
  sqliteSynchronous?: 'full' | 'normal';
  /**
   * SQLite page cache cap in MiB (default 2048; 16..65536; the serve config reads `SERVICE_SQLITE_CACHE_MIB`); filled only as pages are
   * read
   */
  sqliteCacheMib?: number;
  /** how long a writer waits on a locked SQLite file or a Postgres connection (default 5000 ms) */
  busyTimeoutMs?: number;
}

