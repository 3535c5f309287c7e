/** Migration 11 (accessmap node number cover) for postgres; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/**
 * Empty on PostgreSQL, so both backends count the same versions. SQLite adds a covering index for
 * its path search's walk, which names each resource by id from its number (see the SQLite file);
 * the Postgres walk reads the resource's whole row in its join (kind, name, class and parent of the
 * resources that link principals), so a narrower index would not spare it the heap.
 */
export const POSTGRES_MIGRATION_011_ACCESSMAP_NUMBER_COVER: readonly Migration[] = [
  {
    version: 11,
    name: 'accessmap_node_number_cover',
    async up() {},
  },
];
