/** Migration 14 (accessmap edge sequence) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `access_edges.seq`, as on SQLite (see that file): an integer per edge in the order it was
 * stored, from an identity column (existing edges numbered in id order first). The resource index
 * becomes `(resource_no, seq)` with the tenant included, and pages that seek a node's edges walk
 * `seq` with their cursor, the order SQLite's rowid gives, so both backends page alike.
 *
 * The table is under FORCE ROW LEVEL SECURITY, which confines its owner too, so the numbering of
 * existing rows lifts FORCE for the length of this transaction and puts it back.
 */
export const POSTGRES_MIGRATION_014_ACCESSMAP_EDGE_SEQ: readonly Migration[] = [
  {
    version: 14,
    name: 'accessmap_edge_seq',
    async up(tx) {
      const statements = [
        `alter table access_edges no force row level security`,
        `alter table access_edges add column seq bigint`,
        `update access_edges e set seq = n.k from (select tenant_id, id, row_number() over (order by id) as k from access_edges) n ` +
          `where n.tenant_id = e.tenant_id and n.id = e.id`,
        `alter table access_edges alter column seq set not null`,
        `alter table access_edges alter column seq add generated always as identity`,
        `select setval(pg_get_serial_sequence('access_edges', 'seq'), greatest(1, (select coalesce(max(seq), 0) from access_edges)), ` +
          `(select count(*) from access_edges) > 0)`,
        `drop index access_edges_resource_idx`,
        `create index access_edges_resource_idx on access_edges (resource_no, seq) include (tenant_id)`,
        `alter table access_edges force row level security`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
