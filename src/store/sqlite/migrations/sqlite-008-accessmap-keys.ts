/** Migration 8 (accessmap keys) for sqlite; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/**
 * Empty on SQLite, so both backends count the same versions. Postgres moves the tenant to the end
 * of access_edges' two random indexes, because it sorts every matching edge when `= ANY(…)` falls
 * on an index's second column (see the Postgres file). SQLite walks `in (…)` seek by seek in index
 * order and needs no sort, and its merge cost (docs/accessmap.md "Reaching 50,000 edges/s") does
 * not depend on where the tenant sits in the key, only on the size of its entries.
 */
export const SQLITE_MIGRATION_008_ACCESSMAP_KEYS: readonly Migration[] = [
  {
    version: 8,
    name: 'accessmap_keys',
    async up() {},
  },
];
