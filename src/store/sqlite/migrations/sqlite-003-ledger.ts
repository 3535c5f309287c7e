/** Migration 3 (ledger) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { ts, uuid } from '../sqlite-checks.js';

/**
 * The audit ledger tables (layout explained in src/ledger/ledger-store.ts). `audit_records` is a
 * rowid table keyed by `pos = chain << 40 | seq`: appends go to the right edge of the b-tree, which
 * SQLite packs full, and no per-row tenant text or second key is stored (bytes per record). Each
 * tenant's chain number comes from `audit_heads` (unique), assigned on the chain's first append.
 * `prev_hash` is not stored (it is the previous row's hash); `meta_commitment` is stored only once
 * meta has been erased (blind destroyed), otherwise it is recomputed from blind + meta, so exactly
 * one of the two is present. Append-only: triggers RAISE on UPDATE and DELETE. Erasure of meta will
 * be a controlled path that drops and re-creates the update trigger inside one transaction; it is
 * not built yet.
 */
export const SQLITE_MIGRATION_003_LEDGER: readonly Migration[] = [
  {
    version: 3,
    name: 'audit_ledger',
    async up(tx) {
      const statements = [
        `create table audit_heads (
          tenant_id text primary key check (${uuid('tenant_id')}),
          chain integer not null unique check (chain between 1 and 8388607),
          seq integer not null check (seq between 1 and 1099511627775),
          hash blob not null check (length(hash) = 32)
        ) strict`,
        `create table audit_records (
          pos integer primary key check ((pos >> 40) >= 1 and (pos & 1099511627775) >= 1),
          id blob not null check (length(id) = 16),
          occurred_at text not null check (${ts('occurred_at')}),
          actor text not null,
          actor_kind text not null,
          action text not null,
          target_kind text not null,
          target_id text not null,
          meta text,
          meta_blind blob check (meta_blind is null or length(meta_blind) = 32),
          meta_commitment blob check (meta_commitment is null or length(meta_commitment) = 32),
          payload_hash blob check (payload_hash is null or length(payload_hash) = 32),
          hash blob not null check (length(hash) = 32),
          sig blob not null,
          key_id blob not null check (length(key_id) = 16),
          check ((meta_blind is null) <> (meta_commitment is null))
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
