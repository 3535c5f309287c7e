/**
 * Migration 18 (accessmap: a counter of node changes, for the node cache) for postgres; mirror of the other backend's file with the same
 * number.
 */
import type { Migration } from '../../migrations.js';

/**
 * Nothing to do on PostgreSQL: the node cache is the SQLite writer's (modules/accessmap/node-cache.ts);
 * replicas write at once there, and lookups stay in the database. The version exists so both
 * backends keep one numbering.
 */
export const POSTGRES_MIGRATION_018_ACCESSMAP_NODE_EPOCH: readonly Migration[] = [
  {
    version: 18,
    name: 'accessmap_node_epoch',
    async up() {},
  },
];
