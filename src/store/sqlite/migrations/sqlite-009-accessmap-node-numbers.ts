/** Migration 9 (accessmap node numbers) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid } from '../sqlite-checks.js';

/**
 * Node numbers (docs/accessmap.md "Node numbers"): every node an edge names gets an integer, and
 * access_edges' two random indexes hold numbers instead of UUID text. The key becomes
 * `(origin_no, resource_no, mode)` and the resource index `(resource_no, id)`: entries of about
 * 15 and 45 bytes instead of about 110, which is what a merge of the recent level writes
 * (bench accessmap-layout). The UUIDs stay in the rows, so nothing served changes.
 *
 * `access_node_numbers` maps a node id (an agent or an access_nodes row) to its number. Numbers
 * are never reused: rows are never deleted (an agent's delete removes its edges, not its number),
 * so SQLite's `max(rowid) + 1` never hands a retired number out again.
 *
 * Existing nodes are numbered in id order, which for UUIDv7 ids is the order they were created.
 * The recent level gains the same two columns, numbered alike, so rows waiting at the upgrade merge
 * by the new key. Every edge row is rewritten once (the two new columns), so the migration takes
 * about as long as a full merge of the table.
 */
export const SQLITE_MIGRATION_009_ACCESSMAP_NODE_NUMBERS: readonly Migration[] = [
  {
    version: 9,
    name: 'accessmap_node_numbers',
    async up(tx) {
      const statements = [
        `create table access_node_numbers (
          no integer primary key,
          id text not null check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')})
        ) strict`,
        `create unique index access_node_numbers_id_key on access_node_numbers (id)`,
        `insert into access_node_numbers (id, tenant_id)
           select id, tenant_id from (
             select origin_id as id, tenant_id from access_edges union select resource_id, tenant_id from access_edges
             union select origin_id, tenant_id from access_edges_recent union select resource_id, tenant_id from access_edges_recent
           ) order by id`,
        `alter table access_edges add column origin_no integer not null default 0`,
        `alter table access_edges add column resource_no integer not null default 0`,
        `drop index access_edges_key`,
        `drop index access_edges_resource_idx`,
        `update access_edges set origin_no = (select no from access_node_numbers n where n.id = access_edges.origin_id),
           resource_no = (select no from access_node_numbers n where n.id = access_edges.resource_id)`,
        `create unique index access_edges_key on access_edges (origin_no, resource_no, mode)`,
        `create index access_edges_resource_idx on access_edges (resource_no, id)`,
        `alter table access_edges_recent add column origin_no integer not null default 0`,
        `alter table access_edges_recent add column resource_no integer not null default 0`,
        `update access_edges_recent set origin_no = (select no from access_node_numbers n where n.id = access_edges_recent.origin_id),
           resource_no = (select no from access_node_numbers n where n.id = access_edges_recent.resource_id)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
