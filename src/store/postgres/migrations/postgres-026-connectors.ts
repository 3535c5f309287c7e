/**
 * Migration 26 (output connectors, their per-tenant cursors, the collector source roster) for postgres; mirror of the other backend's file
 * with the same number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * `connectors` and `console_sources` are global like the console tables (server administration; a
 * connector's `tenant_id` null means every tenant). `connector_cursors` holds one tenant's delivery
 * state of a connector and is under row-level security like `event_deliveries`, which carries the
 * connector's batches: a worker bound to tenant A never sees tenant B's cursor or deliveries, and an
 * all-tenant connector runs one lane per tenant, each inside that tenant's RLS scope.
 */
export const POSTGRES_MIGRATION_026_CONNECTORS: readonly Migration[] = [
  {
    version: 26,
    name: 'connectors',
    async up(tx) {
      const statements = [
        `create table connectors (
          id uuid primary key,
          name text not null unique check (length(name) between 1 and 100),
          kind text not null check (length(kind) between 1 and 40),
          scope_tenant_id uuid references tenants (id),
          format text not null,
          config text not null,
          sources text not null,
          enabled integer not null check (enabled in (0, 1)),
          max_attempts integer not null check (max_attempts between 1 and 50),
          initial_interval_s integer not null check (initial_interval_s between 1 and 86400),
          secret_refs text not null,
          version integer not null check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create table connector_cursors (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          connector_id uuid not null,
          source text not null check (source in ('ledger', 'events')),
          cursor_seq bigint not null check (cursor_seq >= 0),
          delivered_seq bigint not null check (delivered_seq >= 0),
          delivered_at text check (delivered_at is null or ${ts('delivered_at')}),
          created_at text not null check (${ts('created_at')}),
          unique (connector_id, tenant_id, source)
        )`,
        `create index connector_cursors_tenant_idx on connector_cursors (tenant_id, connector_id)`,
        `create table console_sources (
          id uuid primary key,
          name text not null unique check (length(name) between 1 and 100),
          kind text not null check (length(kind) between 1 and 60),
          scope_tenant_id uuid not null references tenants (id),
          enabled integer not null check (enabled in (0, 1)),
          poll_interval_s integer not null check (poll_interval_s between 1 and 86400),
          config text not null,
          last_seen_at text check (last_seen_at is null or ${ts('last_seen_at')}),
          counts text not null,
          version integer not null check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        ...tenantIsolationDdl('connector_cursors'),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
