/** Migration 35 (kill switches stored by agent id) for postgres; the steps are shared (src/store/reference-backfill.ts). */
import type { Migration } from '../../migrations.js';
import { backfillKillSwitches, bindPostgresTenant } from '../../reference-backfill.js';

export const POSTGRES_MIGRATION_035_KILL_SWITCH_REFERENCES: readonly Migration[] = [
  { version: 35, name: 'kill_switch_references', up: (tx) => backfillKillSwitches(tx, bindPostgresTenant) },
];
