import { sql, type Kysely, type Transaction } from 'kysely';
import type { MigrationDatabase } from './schema.js';
import { StoreError } from './store-error.js';
import type { StoreReadiness } from './store-types.js';
import { storeTimestamp } from './timestamp.js';

/** One forward-only schema step; `version` is unique and starts at 1 (areas reserve numbers, so holes may exist). */
export interface Migration {
  version: number;
  name: string;
  up(tx: Transaction<MigrationDatabase>): Promise<void>;
}

/** What a backend adds to the shared runner. */
export interface MigrationBackend {
  /** serialise concurrent migrators (replicas, parallel test processes) inside `tx` */
  lock(tx: Transaction<MigrationDatabase>): Promise<void>;
  /** runs once after the last step, in its own locked transaction (grants, isolation checks) */
  finish?(tx: Transaction<MigrationDatabase>): Promise<void>;
}

/** Outcome of `migrate()`. */
export interface MigrationResult {
  applied: number[];
  current: number;
}

/** Highest version in a migration list (0 for none); what the binary expects the database to be at. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

/** Throws `schema_too_new` when the database was migrated by a newer binary. */
export function assertNotNewer(current: number, expected: number): void {
  if (current > expected) {
    throw new StoreError(
      'schema_too_new',
      `database schema is at migration ${current} but this binary knows only up to ${expected}; refusing to start (upgrade svc)`,
    );
  }
}

/** Current migration version inside a transaction that already holds the migration lock. */
async function currentVersionLocked(tx: Transaction<MigrationDatabase>): Promise<number> {
  // Created under the lock: a concurrent CREATE TABLE IF NOT EXISTS can still collide on Postgres.
  await tx.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
  const row = await tx
    .selectFrom('schema_migrations')
    .select(sql<number | string | null>`max(version)`.as('v'))
    .executeTakeFirst();
  return Number(row?.v ?? 0);
}

/** Applies every pending migration, each in its own transaction under the backend's lock. */
export async function runMigrations(
  db: Kysely<MigrationDatabase>,
  migrations: readonly Migration[],
  backend: MigrationBackend,
): Promise<MigrationResult> {
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  // Versions are reserved per area ahead of time (parallel branches take 19, 20, 21…), so the list
  // may have holes until they all land; each version is still unique and applied at most once.
  ordered.forEach((m, i) => {
    if (m.version < 1 || (i > 0 && m.version === ordered[i - 1]?.version))
      throw new Error(`migration list has a duplicate or invalid version ${m.version}`);
  });
  const expected = latestVersion(ordered);
  const applied: number[] = [];
  for (;;) {
    // Re-read the version under the lock each round so two migrators never apply the same step.
    const step = await db.transaction().execute(async (tx) => {
      await backend.lock(tx);
      const current = await currentVersionLocked(tx);
      assertNotNewer(current, expected);
      // The first listed step not yet applied, even below `current`: a step that landed after a
      // higher-numbered one (its area merged later) still runs, once.
      const done = new Set((await tx.selectFrom('schema_migrations').select('version').execute()).map((r) => Number(r.version)));
      const next = ordered.find((m) => !done.has(m.version));
      if (!next) return null;
      await next.up(tx);
      await tx
        .insertInto('schema_migrations')
        .values({ version: next.version, name: next.name, applied_at: storeTimestamp() })
        .execute();
      return next.version;
    });
    if (step === null) break;
    applied.push(step);
  }
  if (backend.finish) {
    const finish = backend.finish;
    await db.transaction().execute(async (tx) => {
      await backend.lock(tx);
      await finish(tx);
    });
  }
  return { applied, current: expected };
}

/** Shared readiness verdict from the two migration numbers. */
export function readinessOf(current: number, expected: number): StoreReadiness {
  const migrations = { current, expected };
  if (current === expected) return { ok: true, reachable: true, migrations };
  try {
    assertNotNewer(current, expected);
    return { ok: false, reachable: true, migrations, error: `${expected - current} migration(s) pending` };
  } catch (err) {
    return { ok: false, reachable: true, migrations, error: errorText(err) };
  }
}

/** Message of an unknown thrown value. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
