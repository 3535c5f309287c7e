/** Migration 4 (WebAuthn step-up) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * WebAuthn credentials and outstanding challenges. Global like the identity tables (no
 * `tenant_id`, no row-level security); grants come from WEBAUTHN_APP_ROLE_GRANTS.
 */
export const POSTGRES_MIGRATION_004_WEBAUTHN: readonly Migration[] = [
  {
    version: 4,
    name: 'webauthn',
    async up(tx) {
      const statements = [
        `create table webauthn_credentials (
          id uuid primary key,
          user_id uuid not null references users (id),
          credential_id text not null unique check (length(credential_id) between 16 and 1400),
          public_key text not null,
          sign_count bigint not null default 0 check (sign_count >= 0),
          transports text not null default '',
          name text not null check (length(name) between 1 and 100),
          device_type text not null check (device_type in ('singleDevice', 'multiDevice')),
          backed_up smallint not null default 0 check (backed_up in (0, 1)),
          created_at text not null check (${ts('created_at')}),
          last_used_at text check (last_used_at is null or ${ts('last_used_at')})
        )`,
        `create index webauthn_credentials_user_idx on webauthn_credentials (user_id)`,
        `create table webauthn_challenges (
          id uuid primary key,
          user_id uuid not null references users (id),
          session_id uuid not null,
          purpose text not null check (purpose in ('register', 'step_up')),
          challenge text not null,
          created_at text not null check (${ts('created_at')}),
          expires_at text not null check (${ts('expires_at')})
        )`,
        `create index webauthn_challenges_expiry_idx on webauthn_challenges (expires_at)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
