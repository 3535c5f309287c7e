/** Migration 36 (legal holds and open erasures stored by subject id) for sqlite; shared steps: src/store/reference-backfill.ts. */
import type { Migration } from '../../migrations.js';
import { backfillHoldSubjects } from '../../reference-backfill.js';

export const SQLITE_MIGRATION_036_HOLD_REFERENCES: readonly Migration[] = [
  { version: 36, name: 'hold_references', up: (tx) => backfillHoldSubjects(tx) },
];
