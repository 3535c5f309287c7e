/** Migration 5 (accessmap) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

const TS = `'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * Workspaces, graph nodes (sessions, identities, resources) and access edges, all under row-level
 * security; agents gain labels. Mirror of sqlite-005-accessmap.ts (same columns and keys).
 */
export const POSTGRES_MIGRATION_005_ACCESSMAP: readonly Migration[] = [
  {
    version: 5,
    name: 'accessmap',
    async up(tx) {
      const statements = [
        `alter table agents add column labels text not null default '{}'`,
        `create table workspaces (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          display_name text not null,
          root_path text not null,
          mount_mode text not null default 'rw' check (mount_mode in ('rw', 'ro')),
          dlp_posture text not null default 'label' check (dlp_posture in ('label', 'deny', 'off')),
          read_cap_bytes bigint not null default 0 check (read_cap_bytes >= 0),
          restricted_subpaths text not null default '[]',
          mount_target text not null default '/workspace',
          version integer not null default 1 check (version >= 1),
          created_at text not null check (created_at ~ ${TS}),
          updated_at text not null check (updated_at ~ ${TS})
        )`,
        `create index workspaces_tenant_id_idx on workspaces (tenant_id, id)`,
        `create table access_nodes (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          kind text not null check (kind in ('session', 'identity', 'resource')),
          ref text not null,
          name text not null,
          class text not null default '' check (class in ('', 'data', 'config', 'code', 'credential')),
          parent_id uuid,
          created_at text not null check (created_at ~ ${TS})
        )`,
        `create unique index access_nodes_ref_key on access_nodes (tenant_id, kind, ref)`,
        `create index access_nodes_tenant_id_idx on access_nodes (tenant_id, id)`,
        `create index access_nodes_parent_idx on access_nodes (tenant_id, parent_id) where parent_id is not null`,
        // The resources attack paths go through (docs/accessmap.md): a path search asks which of the
        // resources it meets are among these few, not for every resource's row.
        `create index access_nodes_linking_idx on access_nodes (tenant_id, id) where class in ('credential', 'config', 'code')`,
        // Keyed by (tenant, id), as on SQLite: pages walk it; no separate id index.
        `create table access_edges (
          id uuid not null,
          tenant_id uuid not null references tenants (id),
          origin_kind text not null check (origin_kind in ('agent', 'session', 'identity')),
          origin_id uuid not null,
          resource_id uuid not null,
          mode text not null check (mode in ('r', 'rw')),
          permitted integer not null default 0 check (permitted in (0, 1)),
          grant_source text not null default '',
          observed_count bigint not null default 0 check (observed_count >= 0),
          first_seen text check (first_seen is null or first_seen ~ ${TS}),
          last_seen text check (last_seen is null or last_seen ~ ${TS}),
          confidence text not null default '' check (confidence in ('', 'high', 'medium', 'low')),
          signal_source text not null default '',
          created_at text not null check (created_at ~ ${TS}),
          updated_at text not null check (updated_at ~ ${TS}),
          check (permitted = 1 or observed_count > 0),
          primary key (tenant_id, id)
        )`,
        // The two indexes an edge lands in at a random place. The key, origin first, also serves a
        // principal's edges: path searches read (origin → resource, mode) from it alone. The
        // resource index walks a resource's edges in id order (incoming neighbour pages,
        // resource-filtered graph pages; without it the planner walks (tenant_id, id) instead).
        // No recent level here (SQLite only, docs/accessmap.md "Storage"): PostgreSQL's WAL logs
        // row changes, not whole pages, so a random index insert costs it no page write per commit.
        `create unique index access_edges_key on access_edges (tenant_id, origin_id, resource_id, mode)`,
        `create index access_edges_resource_idx on access_edges (tenant_id, resource_id, id)`,
        ...tenantIsolationDdl('workspaces'),
        ...tenantIsolationDdl('access_nodes'),
        ...tenantIsolationDdl('access_edges'),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
