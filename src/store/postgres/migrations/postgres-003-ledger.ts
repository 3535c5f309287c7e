/** Migration 3 (ledger) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

const TS = `'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * The audit ledger tables, both under row-level security. As on SQLite, `prev_hash` is not stored
 * (the previous row's hash) and `meta_commitment` only once meta is erased (src/ledger/ledger-store.ts). Append-only twice over: the app
 * role is
 * granted only SELECT, INSERT on `audit_records` (postgres-roles.ts), and triggers reject UPDATE,
 * DELETE and TRUNCATE for everyone, the owner included. Erasure of meta (DECISIONS.md: blind
 * destroyed, commitment kept) will be a SECURITY DEFINER function owned by the table owner that
 * disables the update trigger for its own statement only; it is not built yet.
 */
export const POSTGRES_MIGRATION_003_LEDGER: readonly Migration[] = [
  {
    version: 3,
    name: 'audit_ledger',
    async up(tx) {
      const statements = [
        `create table audit_records (
          tenant_id uuid not null,
          seq bigint not null check (seq >= 1),
          id bytea not null check (length(id) = 16),
          occurred_at text not null check (occurred_at ~ ${TS}),
          actor text not null,
          actor_kind text not null,
          action text not null,
          target_kind text not null,
          target_id text not null,
          meta text,
          meta_blind bytea check (meta_blind is null or length(meta_blind) = 32),
          meta_commitment bytea check (meta_commitment is null or length(meta_commitment) = 32),
          payload_hash bytea check (payload_hash is null or length(payload_hash) = 32),
          hash bytea not null check (length(hash) = 32),
          sig bytea not null,
          key_id bytea not null check (length(key_id) = 16),
          check ((meta_blind is null) <> (meta_commitment is null)),
          primary key (tenant_id, seq)
        )`,
        `create table audit_heads (
          tenant_id uuid primary key,
          seq bigint not null check (seq >= 1),
          hash bytea not null check (length(hash) = 32)
        )`,
        `create function audit_records_append_only() returns trigger language plpgsql as $f$
          begin raise exception 'audit_records is append-only' using errcode = 'insufficient_privilege'; end $f$`,
        `create trigger audit_records_no_update before update or delete on audit_records
          for each row execute function audit_records_append_only()`,
        `create trigger audit_records_no_truncate before truncate on audit_records
          for each statement execute function audit_records_append_only()`,
        ...tenantIsolationDdl('audit_records'),
        ...tenantIsolationDdl('audit_heads'),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
