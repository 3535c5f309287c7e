/**
 * Migration 24 (console: sealed secrets, settings, SSO identities) for postgres; mirror of the other backend's file with the same number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/** Global tables like the identity ones (no tenant_id, no row-level security); grants from CONSOLE_APP_ROLE_GRANTS. */
export const POSTGRES_MIGRATION_024_CONSOLE: readonly Migration[] = [
  {
    version: 24,
    name: 'console',
    async up(tx) {
      const statements = [
        `create table console_secrets (
          id uuid primary key,
          name text not null unique check (length(name) between 1 and 100),
          sealed text not null check (sealed like 'sv1:%'),
          hint text not null check (length(hint) <= 4),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create table console_settings (
          key text primary key check (key in ('sso', 'license')),
          value text not null,
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create table sso_identities (
          user_id uuid primary key references users (id),
          issuer text not null check (length(issuer) between 1 and 2000),
          subject text not null check (length(subject) between 1 and 255),
          password_disabled smallint not null default 0 check (password_disabled in (0, 1)),
          created_at text not null check (${ts('created_at')}),
          last_login_at text not null check (${ts('last_login_at')}),
          unique (issuer, subject)
        )`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
