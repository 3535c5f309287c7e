/** Migration 3 (ledger) for sqlite; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/** Empty until the ledger area lands its tables; an empty list adds no schema version. */
export const SQLITE_MIGRATION_003_LEDGER: readonly Migration[] = [];
