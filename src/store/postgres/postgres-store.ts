import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { errorText, latestVersion, readinessOf, runMigrations, type MigrationResult } from '../migrations.js';
import type { Database, MigrationDatabase } from '../schema.js';
import type { Store, StoreCapabilities, StoreConfig, StoreLog, StoreReadiness } from '../store-types.js';
import { StoreError } from '../store-error.js';
import { assertTenantId } from '../tenant-id.js';
import { withIntentMarker, type ChangeProbe } from '../../ledger/audit-intent.js';

/** Whether a body wrote: Postgres's transaction id, assigned at the first write (audit-intent.ts). */
const XID_PROBE: ChangeProbe = { kind: 'xid' };
import { appRoleGrants, appRoleSequences, POSTGRES_MIGRATIONS } from './postgres-migrations.js';
import { ensureAppRole, grantAppRole, resolveAppRole, verifyIsolation } from './postgres-roles.js';

const CAPABILITIES: StoreCapabilities = Object.freeze({
  supportsRls: true,
  supportsConcurrentWriters: true,
  supportsAdvisoryLocks: true,
  supportsReturning: true,
});

// Advisory-lock key of the migration runner: the bytes of "svc_mig" as a bigint. Advisory locks
// are scoped to the current database, which is exactly the scope of a schema.
const MIGRATION_LOCK_KEY = '32499791496571239';

/** Postgres store: pg pool, migrations as the DSN's user, every transaction as the non-owner app role. */
class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  readonly capabilities = CAPABILITIES;
  #closed = false;

  constructor(
    readonly db: Kysely<Database>,
    readonly appRole: string,
    private readonly log: StoreLog,
  ) {}

  #open(): void {
    if (this.#closed) throw new StoreError('store_closed', 'store is closed');
  }

  async migrate(): Promise<MigrationResult> {
    this.#open();
    const role = this.appRole;
    const mdb = this.db as unknown as Kysely<MigrationDatabase>;
    const me = await sql<{ user: string; super: boolean }>`
      select current_user as user, rolsuper as super from pg_catalog.pg_roles where rolname = current_user`.execute(mdb);
    if (me.rows[0]?.super) {
      // RLS holds for the app role either way, but a superuser session can SET ROLE back, so a SQL
      // injection would not be confined by the database; a non-superuser owner removes that path.
      this.log.warn(
        { user: me.rows[0].user, app_role: role },
        'store connects as a PostgreSQL superuser; use a non-superuser owner role (docs/storage.md)',
      );
    }
    await this.#checkAutovacuum(mdb);
    const result = await runMigrations(mdb, POSTGRES_MIGRATIONS, {
      lock: async (tx) => {
        await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)`.execute(tx);
      },
      finish: async (tx) => {
        await ensureAppRole(tx, role);
        await grantAppRole(tx, role, appRoleGrants(), appRoleSequences());
        await verifyIsolation(tx, role);
      },
    });
    if (result.applied.length > 0) this.log.info({ applied: result.applied, current: result.current }, 'store migrations applied');
    return result;
  }

  /**
   * Warns when autovacuum will not look after the service's tables: off for the server (or
   * `track_counts` off, which it needs), or `autovacuum_enabled = false` on a table of the schema.
   * Ingest grows the edge and node tables by millions of rows; without autovacuum they keep no
   * statistics (plans sort whole tenants) and no visibility map (every index-only scan of a path
   * search reads the heap too): reachability p95 at 1,000,000 edges 197-216 ms against 128 ms
   * after a vacuum (docs/storage.md "Maintenance"). A warning, not a refusal: an operator may
   * vacuum on a schedule of their own.
   */
  async #checkAutovacuum(mdb: Kysely<MigrationDatabase>): Promise<void> {
    const r = await sql<{ autovacuum: string; track_counts: string; tables: string[] | null }>`
      select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as track_counts,
        (select array_agg(c.relname::text order by c.relname) from pg_catalog.pg_class c
          where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
            and c.reloptions @> array['autovacuum_enabled=false']) as tables`.execute(mdb);
    const row = r.rows[0];
    if (row === undefined) return;
    const serverOff = row.autovacuum !== 'on' || row.track_counts !== 'on';
    const tables = row.tables ?? [];
    if (!serverOff && tables.length === 0) return;
    this.log.warn(
      { autovacuum: row.autovacuum, track_counts: row.track_counts, ...(tables.length > 0 ? { tables_without_autovacuum: tables } : {}) },
      serverOff
        ? 'PostgreSQL autovacuum is off: tables that ingest grows keep no statistics or visibility map and path searches slow down; ' +
            'turn it on or run VACUUM (ANALYZE) after large loads (docs/storage.md "Maintenance")'
        : `PostgreSQL autovacuum is disabled on ${tables.join(', ')}: run VACUUM (ANALYZE) on them after large loads or re-enable it ` +
            `(docs/storage.md "Maintenance")`,
    );
  }

  async readiness(): Promise<StoreReadiness> {
    const expected = latestVersion(POSTGRES_MIGRATIONS);
    if (this.#closed) return { ok: false, reachable: false, migrations: { current: 0, expected }, error: 'store is closed' };
    try {
      const present = await sql<{ present: boolean }>`select to_regclass('schema_migrations') is not null as present`.execute(this.db);
      let current = 0;
      if (present.rows[0]?.present) {
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
    const marked = withIntentMarker(null, fn, XID_PROBE);
    return this.db.transaction().execute(async (tx) => {
      // set_config(…, true) is SET LOCAL: undone at commit/rollback, so a pooled connection never
      // carries a role or tenant into the next transaction. The tenant is reset to '' explicitly so
      // a stray session-level SET cannot leak in: '' is not a uuid, so a tenant-table row errors.
      await sql`select set_config('role', ${this.appRole}, true), set_config('app.tenant_id', '', true)`.execute(tx);
      return marked(tx);
    });
  }

  async withTenant<T>(tenantId: string, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
    assertTenantId(tenantId);
    this.#open();
    const marked = withIntentMarker(tenantId, fn, XID_PROBE);
    return this.db.transaction().execute(async (tx) => {
      await sql`select set_config('role', ${this.appRole}, true), set_config('app.tenant_id', ${tenantId}, true)`.execute(tx);
      return marked(tx);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.db.destroy();
  }
}

/** The DSN without its password, for logs. */
export function redactDsn(dsn: string): string {
  try {
    const url = new URL(dsn);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparsed dsn)';
  }
}

/** Opens a pool on `config.dsn`; connections are made lazily, so an unreachable server surfaces in `migrate`/`readiness`. */
export async function openPostgresStore(config: StoreConfig, log: StoreLog): Promise<Store> {
  if (!config.dsn) throw new StoreError('invalid_config', 'the postgres store needs a DSN (--dsn or SERVICE_DSN)');
  const appRole = resolveAppRole(config.pgAppRole);
  const poolSize = config.poolSize ?? 10;
  if (!Number.isInteger(poolSize) || poolSize < 1)
    throw new StoreError('invalid_config', `postgres pool size must be a positive integer, got ${poolSize}`);
  const pool = new pg.Pool({
    connectionString: config.dsn,
    max: poolSize,
    connectionTimeoutMillis: config.busyTimeoutMs ?? 5000,
    application_name: 'svc',
  });
  // An idle client whose server went away emits 'error' on the pool; unhandled it would kill the process.
  pool.on('error', (err) => log.warn({ err: err.message }, 'idle postgres connection failed'));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  log.info({ store: 'postgres', dsn: redactDsn(config.dsn), pool_size: poolSize, app_role: appRole }, 'store opened');
  return new PostgresStore(db, appRole, log);
}
