/** Migration 2 (identity) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;
const ROLE = `('viewer', 'editor', 'admin', 'owner')`;

/**
 * Users, memberships, sessions, API tokens and the setup claim. All global: no `tenant_id`
 * column and no row-level security (schema-identity.ts explains why); grants come from
 * IDENTITY_APP_ROLE_GRANTS.
 */
export const POSTGRES_MIGRATION_002_IDENTITY: readonly Migration[] = [
  {
    version: 2,
    name: 'identity',
    async up(tx) {
      const statements = [
        `create table users (
          id uuid primary key,
          email text not null unique check (email = lower(email) and length(email) between 3 and 254),
          password_hash text not null,
          superadmin smallint not null default 0 check (superadmin in (0, 1)),
          status text not null check (status in ('active', 'disabled')),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create table memberships (
          user_id uuid not null references users (id),
          org_id uuid not null references tenants (id),
          role text not null check (role in ${ROLE}),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')}),
          primary key (user_id, org_id)
        )`,
        `create index memberships_org_idx on memberships (org_id, user_id)`,
        `create table sessions (
          id uuid primary key,
          selector text not null unique,
          secret_hash text not null check (length(secret_hash) = 64),
          user_id uuid not null references users (id),
          aal smallint not null default 1 check (aal in (1, 2, 3)),
          aal_expires_at text check (aal_expires_at is null or ${ts('aal_expires_at')}),
          amr text not null,
          created_at text not null check (${ts('created_at')}),
          expires_at text not null check (${ts('expires_at')}),
          revoked_at text check (revoked_at is null or ${ts('revoked_at')})
        )`,
        `create index sessions_user_idx on sessions (user_id)`,
        `create table api_tokens (
          id uuid primary key,
          selector text not null unique,
          secret_hash text not null check (length(secret_hash) = 64),
          user_id uuid not null references users (id),
          name text not null,
          role text not null check (role in ${ROLE}),
          org_id uuid references tenants (id),
          superadmin smallint not null default 0 check (superadmin in (0, 1)),
          created_at text not null check (${ts('created_at')}),
          expires_at text check (expires_at is null or ${ts('expires_at')}),
          revoked_at text check (revoked_at is null or ${ts('revoked_at')}),
          rotated_from uuid
        )`,
        `create index api_tokens_user_idx on api_tokens (user_id)`,
        `create index api_tokens_org_idx on api_tokens (org_id)`,
        `create table setup_claims (
          id integer primary key check (id = 1),
          claimed_at text not null check (${ts('claimed_at')})
        )`,
      ];
      for (const statement of statements) await sql.raw(statement).execute(tx);
    },
  },
];
