/** Migration 12 (accessmap: drop the node number cover) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * Drops `access_nodes_no_cover` (migration 11). It was meant to let the path search's walk name
 * each resource from the index alone, but measured no gain: 2.8–3.4 µs per access against
 * 2.7–3.5 µs through the unique `(no)` index (40 lists of 250 agents on a 1,000,000-edge estate),
 * reachability p95 91–94 ms against 78–92 ms at 2,000,000 edges. So it does not cost every node
 * insert an index entry (docs/accessmap.md "Node numbers on `main`"). Migration 11 stays as it
 * landed, so every database, whenever it was migrated, ends without the index.
 */
export const SQLITE_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER: readonly Migration[] = [
  {
    version: 12,
    name: 'accessmap_drop_node_number_cover',
    async up(tx) {
      await sql.raw('drop index if exists access_nodes_no_cover').execute(tx);
    },
  },
];
