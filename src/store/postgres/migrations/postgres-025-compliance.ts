/** Migration 25 (compliance: legal holds, erasure requests, custody) for postgres; mirror of the sqlite file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

export const POSTGRES_MIGRATION_025_COMPLIANCE: readonly Migration[] = [
  {
    version: 25,
    name: 'compliance',
    async up(tx) {
      const statements = [
        `create table cmp_holds (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          scope text not null check (scope in ('tenant', 'data_class', 'subject')),
          subject_kind text not null default '',
          subject_ref text not null default '',
          data_class text not null default '',
          matter text not null,
          reason text not null,
          title text not null default '',
          on_behalf_of text not null default '',
          status text not null check (status in ('active', 'released')),
          placed_by text not null,
          released_by text,
          release_approval_id uuid,
          released_at text check (released_at is null or ${ts('released_at')}),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create index cmp_holds_tenant_idx on cmp_holds (tenant_id, id)`,
        `create index cmp_holds_subject_idx on cmp_holds (tenant_id, status, subject_kind, subject_ref)`,
        `create table cmp_erasures (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          case_ref text not null,
          subject_kind text not null,
          subject_ref text not null,
          aliases text not null default '[]',
          data_classes text not null default '[]',
          reason text not null default '',
          status text not null check (status in ('received', 'pending_approval', 'completed')),
          requested_by text not null,
          approval_id uuid,
          receipt text,
          completed_at text check (completed_at is null or ${ts('completed_at')}),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create index cmp_erasures_tenant_idx on cmp_erasures (tenant_id, id)`,
        `create table cmp_custody (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          record_kind text not null check (record_kind in ('hold', 'erasure')),
          record_id uuid not null,
          event text not null,
          people text not null default '[]',
          approval_id uuid,
          ledger_seq bigint not null,
          ledger_hash text not null,
          created_at text not null check (${ts('created_at')})
        )`,
        `create index cmp_custody_record_idx on cmp_custody (tenant_id, record_id, id)`,
        ...tenantIsolationDdl('cmp_holds'),
        ...tenantIsolationDdl('cmp_erasures'),
        ...tenantIsolationDdl('cmp_custody'),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
