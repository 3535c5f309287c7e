/** Migration 28 (claude-policy check-ins, capabilities configurations and their revisions) for postgres; mirror of the sqlite file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

export const POSTGRES_MIGRATION_028_CLAUDE_POLICY: readonly Migration[] = [
  {
    version: 28,
    name: 'claude-policy',
    async up(tx) {
      const statements = [
        `create table cp_checkins (
          tenant_id uuid not null references tenants (id),
          surface text not null,
          host text not null check (length(host) between 1 and 253),
          sha256 text not null check (length(sha256) = 64),
          revision bigint check (revision is null or revision >= 1),
          verified integer not null check (verified in (0, 1)),
          reason text not null default '',
          checked_in_by text not null,
          checked_in_at text not null check (${ts('checked_in_at')}),
          primary key (tenant_id, surface, host)
        )`,
        `create table cap_configs (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          name text not null,
          kind text not null check (kind in ('mcp_server', 'tool')),
          revision bigint not null check (revision >= 1),
          document text not null,
          created_by text not null,
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')}),
          deleted_at text check (deleted_at is null or ${ts('deleted_at')})
        )`,
        `create unique index cap_configs_name_key on cap_configs (tenant_id, name) where deleted_at is null`,
        `create index cap_configs_tenant_idx on cap_configs (tenant_id, id)`,
        `create table cap_config_revisions (
          tenant_id uuid not null references tenants (id),
          config_id uuid not null references cap_configs (id),
          revision bigint not null check (revision >= 1),
          change text not null check (change in ('create', 'replace', 'delete')),
          document text not null,
          actor text not null,
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, config_id, revision)
        )`,
        `create table cap_secret_refs (
          owner_tenant uuid not null,
          config_id uuid not null,
          config_name text not null,
          secret_name text not null,
          primary key (owner_tenant, config_id, secret_name)
        )`,
        ...tenantIsolationDdl('cp_checkins'),
        ...tenantIsolationDdl('cap_configs'),
        ...tenantIsolationDdl('cap_config_revisions'),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
