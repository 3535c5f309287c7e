/** Migration 37 (the deployment's secrets key check) for sqlite; mirror of the postgres file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { ts } from '../sqlite-checks.js';

/** The same table as on Postgres: a data directory's key may be replaced by a SERVICE_SECRETS_KEY_FILE that does not open its values. */
export const SQLITE_MIGRATION_037_SECRETS_KEY_CHECK: readonly Migration[] = [
  {
    version: 37,
    name: 'secrets_key_check',
    async up(tx) {
      await sql
        .raw(
          `create table secrets_key_check (
            id integer primary key check (id = 1),
            key_id text not null check (length(key_id) = 16),
            check_value text not null check (length(check_value) between 1 and 200),
            recorded_by text not null check (length(recorded_by) between 1 and 2000),
            recorded_at text not null check (${ts('recorded_at')})
          ) strict`,
        )
        .execute(tx);
    },
  },
];
