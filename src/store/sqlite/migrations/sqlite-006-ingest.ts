/** Migration 6 (collector ingest) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';


/** Seen batch ids per tenant (idempotent ingest) and the findings / cost samples collectors push. */
export const SQLITE_MIGRATION_006_INGEST: readonly Migration[] = [
  {
    version: 6,
    name: 'ingest',
    async up(tx) {
      const statements = [
        `create table ingest_batches (
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          batch_id text not null check (${uuid('batch_id')}),
          collector text not null default '',
          accepted integer not null check (accepted >= 0),
          rejected text not null default '[]',
          payload_hash text not null check (length(payload_hash) = 64),
          head_seq integer not null check (head_seq >= 0),
          ledger_seq integer check (ledger_seq is null or ledger_seq >= 1),
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, batch_id)
        ) strict, without rowid`,
        `create table ingest_items (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          batch_id text not null check (${uuid('batch_id')}),
          kind text not null check (kind in ('finding', 'cost')),
          body text not null,
          observed_at text not null check (${ts('observed_at')}),
          created_at text not null check (${ts('created_at')})
        ) strict`,
        `create index ingest_items_tenant_kind_idx on ingest_items (tenant_id, kind, observed_at)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
