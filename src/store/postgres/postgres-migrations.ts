import type { Migration } from '../migrations.js';
import { storage } from '../../storage.js';

/**
 * Postgres schema history: every area's postgres migrations in version order (src/storage.ts folds
 * them); mirror of `sqlite-migrations.ts`, same versions and names. Role creation and grants are
 * re-applied after every run (postgres-roles.ts, from the areas' table declarations), so a step only
 * creates its tables and, for a tenant table, calls `tenantIsolationDdl`.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = storage.postgres;

/** What the app role may do per table, folded from every registered area's table declarations. */
export function appRoleGrants(): Record<string, readonly string[]> {
  return storage.grants();
}

/** Sequences the app role draws from (nextval), from the areas' declarations. */
export function appRoleSequences(): string[] {
  return storage.sequences();
}
