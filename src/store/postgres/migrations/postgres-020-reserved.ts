/**
 * Version 20 was reserved for a change that did not need a schema step; the list is dense, so it
 * stays a no-op forever (a database at 20 or above has run it, and it did nothing).
 */
import type { Migration } from '../../migrations.js';

export const POSTGRES_MIGRATION_020_RESERVED: readonly Migration[] = [{ version: 20, name: 'reserved_20', up: async () => {} }];
