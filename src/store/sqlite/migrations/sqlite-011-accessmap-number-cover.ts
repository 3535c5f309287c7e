/** Migration 11 (accessmap node number cover) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `access_nodes_no_cover (no, tenant_id, id)`: the path search's walk names each resource it meets
 * by id from its number, checking the tenant (modules/accessmap/graph-source.ts). Through the
 * unique `(no)` index that is a seek and then a read of the node's row per access; this index
 * answers both from itself. Numbers are handed out in increasing order, so new nodes land at its
 * end and it costs node inserts little. `access_nodes_no_key` stays: it is what makes a number unique.
 */
export const SQLITE_MIGRATION_011_ACCESSMAP_NUMBER_COVER: readonly Migration[] = [
  {
    version: 11,
    name: 'accessmap_node_number_cover',
    async up(tx) {
      await sql.raw('create index access_nodes_no_cover on access_nodes (no, tenant_id, id)').execute(tx);
    },
  },
];
