/** Migration 5 (accessmap) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';


/**
 * Workspaces, graph nodes (sessions, identities, resources) and access edges; agents gain labels.
 * Edges are keyed by (tenant, origin, resource, mode) so an observation and a grant of the same
 * access meet in one row; pages walk `(tenant_id, id)` with UUIDv7 ids (keyset, docs/accessmap.md).
 */
export const SQLITE_MIGRATION_005_ACCESSMAP: readonly Migration[] = [
  {
    version: 5,
    name: 'accessmap',
    async up(tx) {
      const statements = [
        `alter table agents add column labels text not null default '{}'`,
        `create table workspaces (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          display_name text not null,
          root_path text not null,
          mount_mode text not null default 'rw' check (mount_mode in ('rw', 'ro')),
          dlp_posture text not null default 'label' check (dlp_posture in ('label', 'deny', 'off')),
          read_cap_bytes integer not null default 0 check (read_cap_bytes >= 0),
          restricted_subpaths text not null default '[]',
          mount_target text not null default '/workspace',
          version integer not null default 1 check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create index workspaces_tenant_id_idx on workspaces (tenant_id, id)`,
        `create table access_nodes (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          kind text not null check (kind in ('session', 'identity', 'resource')),
          ref text not null,
          name text not null,
          class text not null default '' check (class in ('', 'data', 'config', 'code', 'credential')),
          parent_id text check (parent_id is null or ${uuid('parent_id')}),
          created_at text not null check (${ts('created_at')})
        ) strict`,
        `create unique index access_nodes_ref_key on access_nodes (tenant_id, kind, ref)`,
        `create index access_nodes_tenant_id_idx on access_nodes (tenant_id, id)`,
        `create index access_nodes_parent_idx on access_nodes (tenant_id, parent_id) where parent_id is not null`,
        // The resources attack paths go through (docs/accessmap.md): a path search asks which of the
        // resources it meets are among these few, not for every resource's row.
        `create index access_nodes_linking_idx on access_nodes (tenant_id, id) where class in ('credential', 'config', 'code')`,
        // Keyed by (tenant, id): ids are UUIDv7 minted in increasing order, so new edges land at the
        // end of this index, and graph pages walk it (keyset on id). No separate id index: each
        // index costs ingest one more b-tree insert per edge.
        `create table access_edges (
          id text not null check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          origin_kind text not null check (origin_kind in ('agent', 'session', 'identity')),
          origin_id text not null check (${uuid('origin_id')}),
          resource_id text not null check (${uuid('resource_id')}),
          mode text not null check (mode in ('r', 'rw')),
          permitted integer not null default 0 check (permitted in (0, 1)),
          grant_source text not null default '',
          observed_count integer not null default 0 check (observed_count >= 0),
          first_seen text check (first_seen is null or ${ts('first_seen')}),
          last_seen text check (last_seen is null or ${ts('last_seen')}),
          confidence text not null default '' check (confidence in ('', 'high', 'medium', 'low')),
          signal_source text not null default '',
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')}),
          check (permitted = 1 or observed_count > 0),
          primary key (tenant_id, id)
        ) strict`,
        // The two indexes an edge lands in at a random place. The key, origin first, also serves a
        // principal's edges: path searches read (origin → resource, mode) from it alone. The
        // resource index walks a resource's edges in id order (incoming neighbour pages,
        // resource-filtered graph pages; without it the planner walks (tenant_id, id) instead).
        `create unique index access_edges_key on access_edges (tenant_id, origin_id, resource_id, mode)`,
        `create index access_edges_resource_idx on access_edges (tenant_id, resource_id, id)`,
        // The recent level (docs/accessmap.md "Storage"): observations committed but not yet folded
        // into access_edges, in commit order. Append-only and unindexed, so a commit writes only its
        // own rows; a merge folds them all into access_edges in one pass and empties the table.
        // No CHECKs here: rows come from ingestObservations, and the merge inserts them into
        // access_edges, whose CHECKs and foreign key apply then, in the same transaction.
        `create table access_edges_recent (
          seq integer primary key,
          id text not null,
          tenant_id text not null,
          origin_kind text not null,
          origin_id text not null,
          resource_id text not null,
          mode text not null,
          observed_count integer not null,
          first_seen text not null,
          last_seen text not null,
          confidence text not null,
          signal_source text not null,
          recorded_at text not null
        ) strict`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
