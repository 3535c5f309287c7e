/** Migration 13 (accessmap linking resources by number) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `access_nodes_linking_no`: the linking resources (credential, config, code) by node number. A path
 * search walks accesses by number and takes the linking resources from memory (linking-set.ts);
 * when that set is off or the tenant has more than it holds, the walk probes this index instead,
 * which holds only the linking resources, and reads the row of a resource only when it links
 * principals (docs/accessmap.md "Searches that walk numbers").
 */
export const SQLITE_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS: readonly Migration[] = [
  {
    version: 13,
    name: 'accessmap_linking_numbers',
    async up(tx) {
      await sql
        .raw(`create index access_nodes_linking_no on access_nodes (no) where class in ('credential', 'config', 'code')`)
        .execute(tx);
    },
  },
];
