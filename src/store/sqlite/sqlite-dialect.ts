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
 * Kysely's SQLite driver with `BEGIN IMMEDIATE` transactions.
 * A deferred `BEGIN` upgrades to a write lock on its first write; if another process (an offline
 * `svc` command on the same data dir) holds it, SQLite returns SQLITE_BUSY at once without
 * honouring busy_timeout (https://sqlite.org/lang_transaction.html, "deferred"). Taking the write
 * lock up front makes busy_timeout apply. In-process writers are already serialised by the
 * driver's single-connection mutex.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** SQLite dialect whose transactions start with `BEGIN IMMEDIATE`. */
export function createSqliteDialect(config: SqliteDialectConfig): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ImmediateSqliteDriver(config),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => new SqliteIntrospector(db),
  };
}
