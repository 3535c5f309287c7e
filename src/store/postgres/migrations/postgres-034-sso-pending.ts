/** Migration 34 (pending SSO logins in the store; e-mails folded on ASCII letters only) for postgres; mirror of the sqlite file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `sso_pending_logins`: the logins started and not yet completed (docs/sso.md), in the database so
 * every replica sees them. And the `users.email` check of migration 2: PostgreSQL's `lower()` folds
 * every letter the collation knows (`Ä` → `ä`), while e-mails are now stored with ASCII letters
 * folded only (auth/identity-store.ts normalizeEmail), so the check names A–Z exactly. Addresses
 * stored before are lower case by the old rule, which the new check accepts: no row changes.
 */
export const POSTGRES_MIGRATION_034_SSO_PENDING: readonly Migration[] = [
  {
    version: 34,
    name: 'sso_pending',
    async up(tx) {
      for (const s of [
        `create table sso_pending_logins (
          state_digest text primary key check (state_digest ~ '^[0-9a-f]{64}$'),
          client text not null check (length(client) between 1 and 100),
          issuer text not null check (length(issuer) between 1 and 2000),
          redirect_uri text not null check (length(redirect_uri) between 1 and 2000),
          nonce text not null check (length(nonce) between 1 and 200),
          verifier text not null check (length(verifier) between 43 and 128),
          created_at_ms bigint not null
        )`,
        'create index sso_pending_logins_client on sso_pending_logins (client, created_at_ms)',
        'create index sso_pending_logins_age on sso_pending_logins (created_at_ms)',
        `do $d$
        declare c record;
        begin
          for c in select conname from pg_constraint
                   where conrelid = 'users'::regclass and contype = 'c' and pg_get_constraintdef(oid) like '%lower(email)%'
          loop
            execute format('alter table users drop constraint %I', c.conname);
          end loop;
        end $d$`,
        `alter table users add constraint users_email_ascii_folded check (
          email = translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') and length(email) between 3 and 254
        )`,
      ])
        await sql.raw(s).execute(tx);
    },
  },
];
