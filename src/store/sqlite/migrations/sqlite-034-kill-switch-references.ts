/** Migration 34 (kill switches stored by agent id) for sqlite; the steps are shared (src/store/reference-backfill.ts). */
import type { Migration } from '../../migrations.js';
import { backfillKillSwitches } from '../../reference-backfill.js';

export const SQLITE_MIGRATION_034_KILL_SWITCH_REFERENCES: readonly Migration[] = [
  { version: 34, name: 'kill_switch_references', up: (tx) => backfillKillSwitches(tx) },
];
