/** Migration 9 (accessmap linking changes) for postgres; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/**
 * Empty on PostgreSQL, so both backends count the same versions. SQLite records each change of a
 * node's linking class in `access_linking_changes` so that one process can keep the linking ids in
 * memory for its path searches (see the SQLite file). PostgreSQL searches keep reading the linking
 * resource in the join: several processes may write the database, and its per-statement cost, not
 * the probe, is what a search there spends (docs/accessmap.md "Queries").
 */
export const POSTGRES_MIGRATION_009_ACCESSMAP_LINKING: readonly Migration[] = [
  {
    version: 9,
    name: 'accessmap_linking_changes',
    async up() {},
  },
];
