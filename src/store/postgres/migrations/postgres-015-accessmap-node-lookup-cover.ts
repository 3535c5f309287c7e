/** Migration 15 (accessmap: node lookups from the index alone) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * As on SQLite (see that file): the `(tenant_id, id)` indexes of `access_nodes` and `agents`
 * include what the write paths' lookups read (kind and number, number), so a lookup can be an
 * index-only scan instead of a heap fetch per node. Measured at 1,000,000 edges it changes no
 * figure on PostgreSQL, where a batch's lookups are a few statements of 500 ids and writing the
 * table and its WAL bounds ingest; it is here so both backends keep the same indexes.
 */
export const POSTGRES_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER: readonly Migration[] = [
  {
    version: 15,
    name: 'accessmap_node_lookup_cover',
    async up(tx) {
      for (const s of [
        'create index access_nodes_lookup on access_nodes (tenant_id, id) include (kind, no)',
        'drop index access_nodes_tenant_id_idx',
        'create index agents_lookup on agents (tenant_id, id) include (no)',
        'drop index agents_tenant_id_idx',
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
