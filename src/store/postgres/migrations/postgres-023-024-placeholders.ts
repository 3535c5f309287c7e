/**
 * PLACEHOLDERS for migrations 23–24, which other branches own; the list must be dense, so this
 * branch (compliance, migration 25) runs with no-op steps in their place. Drop this file at merge
 * and register the real 23–24.
 */
import type { Migration } from '../../migrations.js';

export const POSTGRES_MIGRATION_023_024_PLACEHOLDERS: readonly Migration[] = [23, 24].map((version) => ({ version, name: `reserved_${version}`, up: async () => {} }));
