/** Migration 34 (pending SSO logins in the store; e-mails folded on ASCII letters only) for sqlite; mirror of the postgres file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `sso_pending_logins`: the logins started and not yet completed (docs/sso.md), in the database so
 * every replica sees them and a restart keeps them. The `users.email` check of migration 2 stays:
 * SQLite's `lower()` folds ASCII letters only, which is exactly the rule e-mails are now stored by
 * (auth/identity-store.ts normalizeEmail); stored addresses keep their form.
 */
export const SQLITE_MIGRATION_034_SSO_PENDING: readonly Migration[] = [
  {
    version: 34,
    name: 'sso_pending',
    async up(tx) {
      for (const s of [
        `create table sso_pending_logins (
          state_digest text primary key check (length(state_digest) = 64),
          client text not null check (length(client) between 1 and 100),
          issuer text not null check (length(issuer) between 1 and 2000),
          redirect_uri text not null check (length(redirect_uri) between 1 and 2000),
          nonce text not null check (length(nonce) between 1 and 200),
          verifier text not null check (length(verifier) between 43 and 128),
          created_at_ms integer not null
        ) strict`,
        'create index sso_pending_logins_client on sso_pending_logins (client, created_at_ms)',
        'create index sso_pending_logins_age on sso_pending_logins (created_at_ms)',
      ])
        await sql.raw(s).execute(tx);
    },
  },
];
