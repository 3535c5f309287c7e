/** Migration 36 (legal holds and open erasures stored by subject id) for postgres; shared steps: src/store/reference-backfill.ts. */
import type { Migration } from '../../migrations.js';
import { backfillHoldSubjects, bindPostgresTenant } from '../../reference-backfill.js';

export const POSTGRES_MIGRATION_036_HOLD_REFERENCES: readonly Migration[] = [
  { version: 36, name: 'hold_references', up: (tx) => backfillHoldSubjects(tx, bindPostgresTenant) },
];
