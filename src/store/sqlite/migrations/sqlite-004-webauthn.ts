/** Migration 4 (WebAuthn step-up) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';


/** WebAuthn credentials and outstanding challenges; global tables (schema-webauthn.ts). */
export const SQLITE_MIGRATION_004_WEBAUTHN: readonly Migration[] = [
  {
    version: 4,
    name: 'webauthn',
    async up(tx) {
      const statements = [
        `create table webauthn_credentials (
          id text primary key check (${uuid('id')}),
          user_id text not null references users (id) check (${uuid('user_id')}),
          credential_id text not null unique check (length(credential_id) between 16 and 1400),
          public_key text not null,
          sign_count integer not null default 0 check (sign_count >= 0),
          transports text not null default '',
          name text not null check (length(name) between 1 and 100),
          device_type text not null check (device_type in ('singleDevice', 'multiDevice')),
          backed_up integer not null default 0 check (backed_up in (0, 1)),
          created_at text not null check (${ts('created_at')}),
          last_used_at text check (last_used_at is null or ${ts('last_used_at')})
        ) strict`,
        `create index webauthn_credentials_user_idx on webauthn_credentials (user_id)`,
        `create table webauthn_challenges (
          id text primary key check (${uuid('id')}),
          user_id text not null references users (id) check (${uuid('user_id')}),
          session_id text not null check (${uuid('session_id')}),
          purpose text not null check (purpose in ('register', 'step_up')),
          challenge text not null,
          created_at text not null check (${ts('created_at')}),
          expires_at text not null check (${ts('expires_at')})
        ) strict`,
        `create index webauthn_challenges_expiry_idx on webauthn_challenges (expires_at)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
