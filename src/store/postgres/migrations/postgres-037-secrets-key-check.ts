/** Migration 37 (the deployment's secrets key check) for postgres; mirror of the sqlite file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * One row: the id of the secrets key the deployment seals with and a value sealed with it, written
 * by the first start; every later start must open that value, or refuses (secrets/key-check.ts,
 * docs/scale-out.md). A global table, no row-level security.
 */
export const POSTGRES_MIGRATION_037_SECRETS_KEY_CHECK: readonly Migration[] = [
  {
    version: 37,
    name: 'secrets_key_check',
    async up(tx) {
      await sql
        .raw(
          `create table secrets_key_check (
            id integer primary key check (id = 1),
            key_id text not null check (key_id ~ '^[0-9a-f]{16}$'),
            check_value text not null check (length(check_value) between 1 and 200),
            recorded_by text not null check (length(recorded_by) between 1 and 2000),
            recorded_at text not null check (${ts('recorded_at')})
          )`,
        )
        .execute(tx);
    },
  },
];
