/** Migration 3 (ledger) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { ts, uuid } from '../sqlite-checks.js';

/**
 * The audit ledger tables. `audit_records` is WITHOUT ROWID with the primary key (tenant_id, seq):
 * rows are stored in chain order in the key's b-tree, with no second index (bytes per record), and
 * the key is the `UNIQUE(tenant, seq)` backstop against a forked chain. Append-only: triggers
 * RAISE on UPDATE and DELETE. Erasure of meta (DECISIONS.md: blind destroyed, commitment kept)
 * will be a controlled path that drops and re-creates the update trigger inside one transaction;
 * it is not built yet.
 */
export const SQLITE_MIGRATION_003_LEDGER: readonly Migration[] = [
  {
    version: 3,
    name: 'audit_ledger',
    async up(tx) {
      const statements = [
        `create table audit_records (
          tenant_id text not null check (${uuid('tenant_id')}),
          seq integer not null check (seq >= 1),
          id blob not null check (length(id) = 16),
          occurred_at text not null check (${ts('occurred_at')}),
          actor text not null,
          actor_kind text not null,
          action text not null,
          target_kind text not null,
          target_id text not null,
          meta text,
          meta_blind blob check (meta_blind is null or length(meta_blind) = 32),
          meta_commitment blob not null check (length(meta_commitment) = 32),
          payload_hash blob check (payload_hash is null or length(payload_hash) = 32),
          prev_hash blob not null check (length(prev_hash) = 32),
          hash blob not null check (length(hash) = 32),
          sig blob not null,
          key_id blob not null check (length(key_id) = 16),
          primary key (tenant_id, seq)
        ) strict, without rowid`,
        `create table audit_heads (
          tenant_id text primary key check (${uuid('tenant_id')}),
          seq integer not null check (seq >= 1),
          hash blob not null check (length(hash) = 32)
        ) strict`,
        `create trigger audit_records_no_update before update on audit_records
          begin select raise(abort, 'audit_records is append-only'); end`,
        `create trigger audit_records_no_delete before delete on audit_records
          begin select raise(abort, 'audit_records is append-only'); end`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
