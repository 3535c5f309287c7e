/** Migration 15 (accessmap: node lookups from the index alone) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * Every observation an ingest batch carries is resolved to its origin's and its resource's number
 * (node-lookup.ts `nodesById`, `agentsById`): at 10,000,000 edges that was a quarter of ingest's
 * time on the writer. The lookups went in through `(tenant_id, id)` and then read each node's
 * row from the table for its kind and number, two B-tree descents a node. The tenant and id
 * indexes now carry those columns, so the lookup is answered from the index: `access_nodes
 * (tenant_id, id, kind, no)` and `agents (tenant_id, id, no)` take the place of `(tenant_id, id)`,
 * which they begin with, so every query that used the old index uses the new one the same way
 * (docs/accessmap.md "Node lookups from the index").
 */
export const SQLITE_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER: readonly Migration[] = [
  {
    version: 15,
    name: 'accessmap_node_lookup_cover',
    async up(tx) {
      for (const s of [
        'create index access_nodes_lookup on access_nodes (tenant_id, id, kind, no)',
        'drop index access_nodes_tenant_id_idx',
        'create index agents_lookup on agents (tenant_id, id, no)',
        'drop index agents_tenant_id_idx',
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
