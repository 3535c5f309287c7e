/** Migration 2 (identity) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

const ROLE = `('viewer', 'editor', 'admin', 'owner')`;

/** Users, memberships, sessions, API tokens and the setup claim; all global (schema-identity.ts). */
export const SQLITE_MIGRATION_002_IDENTITY: readonly Migration[] = [
  {
    version: 2,
    name: 'identity',
    async up(tx) {
      const statements = [
        `create table users (
          id text primary key check (${uuid('id')}),
          email text not null unique check (email = lower(email) and length(email) between 3 and 254),
          password_hash text not null,
          superadmin integer not null default 0 check (superadmin in (0, 1)),
          status text not null check (status in ('active', 'disabled')),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create table memberships (
          user_id text not null references users (id) check (${uuid('user_id')}),
          org_id text not null references tenants (id) check (${uuid('org_id')}),
          role text not null check (role in ${ROLE}),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')}),
          primary key (user_id, org_id)
        ) strict`,
        `create index memberships_org_idx on memberships (org_id, user_id)`,
        `create table sessions (
          id text primary key check (${uuid('id')}),
          selector text not null unique,
          secret_hash text not null check (length(secret_hash) = 64),
          user_id text not null references users (id) check (${uuid('user_id')}),
          aal integer not null default 1 check (aal in (1, 2, 3)),
          aal_expires_at text check (aal_expires_at is null or ${ts('aal_expires_at')}),
          amr text not null,
          created_at text not null check (${ts('created_at')}),
          expires_at text not null check (${ts('expires_at')}),
          revoked_at text check (revoked_at is null or ${ts('revoked_at')})
        ) strict`,
        `create index sessions_user_idx on sessions (user_id)`,
        `create table api_tokens (
          id text primary key check (${uuid('id')}),
          selector text not null unique,
          secret_hash text not null check (length(secret_hash) = 64),
          user_id text not null references users (id) check (${uuid('user_id')}),
          name text not null,
          role text not null check (role in ${ROLE}),
          org_id text references tenants (id) check (org_id is null or ${uuid('org_id')}),
          superadmin integer not null default 0 check (superadmin in (0, 1)),
          created_at text not null check (${ts('created_at')}),
          expires_at text check (expires_at is null or ${ts('expires_at')}),
          revoked_at text check (revoked_at is null or ${ts('revoked_at')}),
          rotated_from text check (rotated_from is null or ${uuid('rotated_from')})
        ) strict`,
        `create index api_tokens_user_idx on api_tokens (user_id)`,
        `create index api_tokens_org_idx on api_tokens (org_id)`,
        `create table setup_claims (
          id integer primary key check (id = 1),
          claimed_at text not null check (${ts('claimed_at')})
        ) strict`,
      ];
      for (const statement of statements) await sql.raw(statement).execute(tx);
    },
  },
];
