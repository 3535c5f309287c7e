/** Migration 10 (accessmap node cache) for postgres; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/**
 * Empty on PostgreSQL, so both backends count the same versions. SQLite keeps a cache of the nodes
 * ingest resolves, exact through a change log its triggers write (see the SQLite file); on
 * PostgreSQL several processes may write and each batch resolves its nodes in one round trip per
 * kind, so it reads them every time.
 */
export const POSTGRES_MIGRATION_010_ACCESSMAP_NODE_CACHE: readonly Migration[] = [
  {
    version: 10,
    name: 'accessmap_node_cache',
    async up() {},
  },
];
