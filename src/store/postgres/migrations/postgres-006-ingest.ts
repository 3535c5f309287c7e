/** Migration 6 (collector ingest) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/** Seen batch ids per tenant (idempotent ingest) and pushed findings / cost samples, under RLS. */
export const POSTGRES_MIGRATION_006_INGEST: readonly Migration[] = [
  {
    version: 6,
    name: 'ingest',
    async up(tx) {
      const statements = [
        `create table ingest_batches (
          tenant_id uuid not null references tenants (id),
          batch_id uuid not null,
          collector text not null default '',
          accepted integer not null check (accepted >= 0),
          rejected text not null default '[]',
          payload_hash text not null check (length(payload_hash) = 64),
          head_seq bigint not null check (head_seq >= 0),
          ledger_seq bigint check (ledger_seq is null or ledger_seq >= 1),
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, batch_id)
        )`,
        `create table ingest_items (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          batch_id uuid not null,
          kind text not null check (kind in ('finding', 'cost')),
          body text not null,
          observed_at text not null check (${ts('observed_at')}),
          created_at text not null check (${ts('created_at')})
        )`,
        `create index ingest_items_tenant_kind_idx on ingest_items (tenant_id, kind, observed_at)`,
        ...tenantIsolationDdl('ingest_batches'),
        ...tenantIsolationDdl('ingest_items'),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
