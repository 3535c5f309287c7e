/** Migration 21 (security findings) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

/** Stored findings per tenant (deduplicated by natural key) and the collector-ingest read mark. */
export const SQLITE_MIGRATION_021_SECURITY_FINDINGS: readonly Migration[] = [
  {
    version: 21,
    name: 'security_findings',
    async up(tx) {
      const statements = [
        // rule_id and severity carry no CHECK on purpose: the write paths validate them, and a
        // corrupt stored value must reach the SARIF encoder to be refused there (schema-security.ts).
        `create table security_findings (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          natural_key text not null check (length(natural_key) = 64),
          rule_id text not null,
          kind text not null,
          severity text not null,
          source text not null check (source in ('collector', 'integration', 'detector')),
          subject_kind text not null,
          subject_ref text not null,
          message text not null,
          artifact_uri text,
          region_start_line integer check (region_start_line is null or region_start_line >= 1),
          region_end_line integer check (region_end_line is null or region_end_line >= 1),
          tags text not null default '[]',
          evidence text not null default '{}',
          ledger_refs text not null default '[]',
          first_seen text not null check (${ts('first_seen')}),
          last_seen text not null check (${ts('last_seen')}),
          occurrences integer not null check (occurrences >= 1),
          status text not null check (status in ('open', 'acknowledged', 'resolved', 'suppressed')),
          status_by text not null,
          status_note text not null default '',
          status_at text not null check (${ts('status_at')}),
          version integer not null check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create unique index security_findings_natural_key on security_findings (tenant_id, natural_key)`,
        `create index security_findings_tenant_id_idx on security_findings (tenant_id, id)`,
        `create index security_findings_tenant_status_idx on security_findings (tenant_id, status, id)`,
        `create table security_ingest_marks (
          tenant_id text primary key references tenants (id) check (${uuid('tenant_id')}),
          last_item_id text not null check (${uuid('last_item_id')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
