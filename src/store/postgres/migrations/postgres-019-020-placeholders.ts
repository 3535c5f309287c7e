/**
 * PLACEHOLDERS for migrations 19–20, which other branches own; the list must be dense, so this
 * branch (governance, migration 22) runs with no-op steps in their place. Drop this file at merge
 * and register the real 19–20.
 */
import type { Migration } from '../../migrations.js';

export const POSTGRES_MIGRATION_019_020_PLACEHOLDERS: readonly Migration[] = [19, 20].map((version) => ({ version, name: `reserved_${version}`, up: async () => {} }));
