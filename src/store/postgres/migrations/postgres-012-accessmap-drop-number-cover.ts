/** Migration 12 (accessmap: drop the node number cover) for postgres; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/** Empty on PostgreSQL, so both backends count the same versions: its migration 11 added no index (see the SQLite file). */
export const POSTGRES_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER: readonly Migration[] = [
  {
    version: 12,
    name: 'accessmap_drop_node_number_cover',
    async up() {},
  },
];
