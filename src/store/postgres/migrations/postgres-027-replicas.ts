/**
 * Migration 27 (state shared by replicas: keyring, setup token, login failures) for postgres; mirror of the sqlite file with the same
 * number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * What every replica on the database must see the same (docs/scale-out.md): the ledger's keyring
 * (public keys, seq ranges, rotation history; never a private key), the pending setup token's
 * digest, and failed logins for the lockout. Global tables: no tenant, no row-level security.
 */
export const POSTGRES_MIGRATION_027_REPLICAS: readonly Migration[] = [
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
        )`,
        `create table setup_tokens (
          id integer primary key check (id = 1),
          digest text not null check (digest ~ '^[0-9a-f]{64}$'),
          minted_by text not null,
          minted_at text not null check (${ts('minted_at')})
        )`,
        `create table login_failures (
          key text not null check (key ~ '^[0-9a-f]{64}$'),
          at_ms bigint not null
        )`,
        `create index login_failures_key_idx on login_failures (key, at_ms)`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
