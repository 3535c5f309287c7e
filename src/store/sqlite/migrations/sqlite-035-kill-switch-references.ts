/** Migration 35 (kill switches stored by agent id) for sqlite; the steps are shared (src/store/reference-backfill.ts). */
import type { Migration } from '../../migrations.js';
import { backfillKillSwitches } from '../../reference-backfill.js';

export const SQLITE_MIGRATION_035_KILL_SWITCH_REFERENCES: readonly Migration[] = [
  { version: 35, name: 'kill_switch_references', up: (tx) => backfillKillSwitches(tx) },
];
