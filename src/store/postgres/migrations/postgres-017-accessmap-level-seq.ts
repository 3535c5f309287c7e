/** Migration 17 (accessmap: the recent level's seq only grows) for postgres; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/**
 * Nothing to do on PostgreSQL: it has no recent level (docs/accessmap.md "The recent level"). The
 * version exists so both backends keep one numbering.
 */
export const POSTGRES_MIGRATION_017_ACCESSMAP_LEVEL_SEQ: readonly Migration[] = [
  {
    version: 17,
    name: 'accessmap_level_seq',
    async up() {},
  },
];
