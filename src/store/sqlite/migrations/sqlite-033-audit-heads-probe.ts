/**
 * Migration 33 (the heads trigger's "nothing beyond the head" test) for sqlite: nothing to change.
 * SQLite's trigger (migration 19) already tests a range of the integer `pos` key, one probe; the
 * step exists so both backends keep one numbering (postgres-033-audit-heads-probe.ts says why
 * PostgreSQL needed it).
 */
import type { Migration } from '../../migrations.js';

export const SQLITE_MIGRATION_033_AUDIT_HEADS_PROBE: readonly Migration[] = [
  { version: 33, name: 'audit_heads_probe', up: async () => {} },
];
