import type { Migration } from '../migrations.js';
import { storage } from '../../storage.js';

/**
 * SQLite schema history: every area's sqlite migrations in version order (src/storage.ts folds
 * them); mirror of `postgres-migrations.ts`, same versions and names. One file per area and number
 * under migrations/, so areas add tables without touching each other.
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = storage.sqlite;
