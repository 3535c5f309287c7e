/** Migration 14 (accessmap edge sequence) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

/**
 * `access_edges.seq`: every edge gets an integer in the order it was stored, its rowid
 * (`integer primary key autoincrement`, so it survives `VACUUM` and a deleted edge's number is
 * never handed out again). The resource index becomes `(resource_no)` alone: its entries end in the
 * rowid, so it orders a resource's edges by `seq` in about 15 bytes an entry, where
 * `(resource_no, id)` held the edge's UUID in 36 bytes of text. A merge of the recent level lands
 * in that index at random places, and the UUID made it about three fifths of what a merge wrote
 * (docs/accessmap.md "Where a merge's pages go"; measured, merges took 28% less without it).
 *
 * Pages that seek a node's edges (neighbours, and graph and drift pages filtered by origin or
 * resource) walk `seq` with their cursor; pages of the whole tenant still walk `(tenant_id, id)`.
 *
 * SQLite adds a rowid alias only by building the table anew: the rows are copied in id order (so
 * existing edges keep the order pages showed them in), the old table is dropped and the new one
 * renamed, and the indexes are made again. Nothing references `access_edges`, so no foreign key
 * follows it. On a large estate this takes about as long as writing the table once.
 */
export const SQLITE_MIGRATION_014_ACCESSMAP_EDGE_SEQ: readonly Migration[] = [
  {
    version: 14,
    name: 'accessmap_edge_seq',
    async up(tx) {
      const columns =
        'id, tenant_id, origin_kind, origin_id, resource_id, mode, permitted, grant_source, observed_count, first_seen, last_seen, ' +
        'confidence, signal_source, created_at, updated_at, origin_no, resource_no';
      const statements = [
        `create table access_edges_seq (
          seq integer primary key autoincrement,
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
          origin_no integer,
          resource_no integer,
          check (permitted = 1 or observed_count > 0),
          unique (tenant_id, id)
        ) strict`,
        `insert into access_edges_seq (${columns}) select ${columns} from access_edges order by id`,
        `drop table access_edges`,
        `alter table access_edges_seq rename to access_edges`,
        `create unique index access_edges_key on access_edges (origin_no, resource_no, mode)`,
        `create index access_edges_resource_idx on access_edges (resource_no)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
