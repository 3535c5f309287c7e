/** Migration 24 (console: sealed secrets, settings, SSO identities) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

export const SQLITE_MIGRATION_024_CONSOLE: readonly Migration[] = [
  {
    version: 24,
    name: 'console',
    async up(tx) {
      const statements = [
        `create table console_secrets (
          id text primary key check (${uuid('id')}),
          name text not null unique check (length(name) between 1 and 100),
          sealed text not null check (sealed like 'sv1:%'),
          hint text not null check (length(hint) <= 4),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create table console_settings (
          key text primary key check (key in ('sso', 'license')),
          value text not null,
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create table sso_identities (
          user_id text primary key references users (id) check (${uuid('user_id')}),
          issuer text not null check (length(issuer) between 1 and 2000),
          subject text not null check (length(subject) between 1 and 255),
          password_disabled integer not null default 0 check (password_disabled in (0, 1)),
          created_at text not null check (${ts('created_at')}),
          last_login_at text not null check (${ts('last_login_at')}),
          unique (issuer, subject)
        ) strict`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
