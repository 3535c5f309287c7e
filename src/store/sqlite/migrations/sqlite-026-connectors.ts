/**
 * Migration 26 (output connectors, their per-tenant cursors, the collector source roster) for sqlite; mirror of the other backend's file
 * with the same number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

export const SQLITE_MIGRATION_026_CONNECTORS: readonly Migration[] = [
  {
    version: 26,
    name: 'connectors',
    async up(tx) {
      const statements = [
        `create table connectors (
          id text primary key check (${uuid('id')}),
          name text not null unique check (length(name) between 1 and 100),
          kind text not null check (length(kind) between 1 and 40),
          scope_tenant_id text references tenants (id) check (scope_tenant_id is null or ${uuid('scope_tenant_id')}),
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
        ) strict`,
        `create table connector_cursors (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id),
          connector_id text not null,
          source text not null check (source in ('ledger', 'events')),
          cursor_seq integer not null check (cursor_seq >= 0),
          delivered_seq integer not null check (delivered_seq >= 0),
          delivered_at text check (delivered_at is null or ${ts('delivered_at')}),
          created_at text not null check (${ts('created_at')}),
          unique (connector_id, tenant_id, source)
        ) strict`,
        `create table console_sources (
          id text primary key check (${uuid('id')}),
          name text not null unique check (length(name) between 1 and 100),
          kind text not null check (length(kind) between 1 and 60),
          scope_tenant_id text not null references tenants (id),
          enabled integer not null check (enabled in (0, 1)),
          poll_interval_s integer not null check (poll_interval_s between 1 and 86400),
          config text not null,
          last_seen_at text check (last_seen_at is null or ${ts('last_seen_at')}),
          counts text not null,
          version integer not null check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
