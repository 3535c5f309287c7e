/**
 * Migration 27 (state shared by replicas: keyring, setup token, login failures) for sqlite; mirror of the postgres file with the same
 * number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { ts } from '../sqlite-checks.js';

/**
 * The same tables as on Postgres, so both backends keep one schema; a SQLite file has one writer
 * process, which keeps its keyring in the data directory and its counters in memory, so they stay
 * empty here (schema-replicas.ts).
 */
export const SQLITE_MIGRATION_027_REPLICAS: readonly Migration[] = [
  {
    version: 27,
    name: 'replicas',
    async up(tx) {
      for (const s of [
        `create table audit_keyring (
          id integer primary key check (id = 1),
          active_key_id text not null check (length(active_key_id) between 1 and 200),
          state text not null,
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create table setup_tokens (
          id integer primary key check (id = 1),
          digest text not null check (length(digest) = 64),
          minted_by text not null,
          minted_at text not null check (${ts('minted_at')})
        ) strict`,
        `create table login_failures (
          key text not null check (length(key) = 64),
          at_ms integer not null
        ) strict`,
        `create index login_failures_key_idx on login_failures (key, at_ms)`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
