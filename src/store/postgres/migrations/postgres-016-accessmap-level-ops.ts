/**
 * Migration 16 (accessmap: grants and agent deletes wait in the recent level; merges stop testing each row's agent) for postgres; mirror of
 * the other backend's file with the same number.
 */
import type { Migration } from '../../migrations.js';

/**
 * Nothing to do on PostgreSQL: it has no recent level (docs/accessmap.md "The recent level");
 * grants, agent deletes and observations write `access_edges` directly. The version exists so
 * both backends keep one numbering.
 */
export const POSTGRES_MIGRATION_016_ACCESSMAP_LEVEL_OPS: readonly Migration[] = [
  {
    version: 16,
    name: 'accessmap_level_ops',
    async up() {},
  },
];
