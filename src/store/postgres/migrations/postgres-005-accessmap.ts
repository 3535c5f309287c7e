/** Migration 5 (accessmap) for postgres; mirror of the other backend's file with the same number. */
import type { Migration } from '../../migrations.js';

/** Empty until the accessmap area lands its tables; an empty list adds no schema version. */
export const POSTGRES_MIGRATION_005_ACCESSMAP: readonly Migration[] = [];
