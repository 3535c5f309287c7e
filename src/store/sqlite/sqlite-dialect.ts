import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  type SqliteDialectConfig,
} from 'kysely';

/**
 * How a transaction takes `svc.db`'s write lock at its start: `BEGIN IMMEDIATE` while svc.db is the
 * only file that matters, or, once the files areas attach beside it hold their tables
 * (module-storage.ts `SqliteAttachedFile`), `BEGIN DEFERRED` and at once a write to svc.db that
 * changes nothing, which takes svc.db's lock alone. `BEGIN IMMEDIATE` takes the write lock of every
 * attached file, so it would also wait for whoever writes one of them on a connection of its own,
 * which the store's transactions never write.
 */
export interface BeginMode {
  svcDbOnly: boolean;
}

/**
 * A write to svc.db that changes nothing: as a transaction's first statement it takes svc.db's write lock alone. On the store's own
 * table, which every migrated svc.db has.
 */
export const SVC_DB_LOCK = 'update main.schema_migrations set name = name where 0';

/**
 * Kysely's SQLite driver whose transactions hold svc.db's write lock from their first statement.
 * A deferred `BEGIN` upgrades to a write lock on its first write; if another process (an offline
 * `svc` command on the same data dir) holds it, SQLite returns SQLITE_BUSY at once without
 * honouring busy_timeout (https://sqlite.org/lang_transaction.html, "deferred"). Taking the write
 * lock up front makes busy_timeout apply: `BEGIN IMMEDIATE`, or (BeginMode) a write that changes
 * nothing as the transaction's first statement, before it has read anything. In-process writers
 * are already serialised by the driver's single-connection mutex.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly mode: BeginMode,
  ) {
    super(config);
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.mode.svcDbOnly) {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
      return;
    }
    await connection.executeQuery(CompiledQuery.raw('begin'));
    try {
      await connection.executeQuery(CompiledQuery.raw(SVC_DB_LOCK));
    } catch (err) {
      await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
      throw err;
    }
  }
}

/** SQLite dialect whose transactions hold svc.db's write lock from their start (see BeginMode). */
export function createSqliteDialect(config: SqliteDialectConfig, mode: BeginMode = { svcDbOnly: false }): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ImmediateSqliteDriver(config, mode),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => new SqliteIntrospector(db),
  };
}
