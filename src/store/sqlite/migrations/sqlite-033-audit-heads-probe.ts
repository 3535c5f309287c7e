/**
 * Migration 33 (the heads trigger is planned at every call) for sqlite: nothing to change. SQLite
 * plans its trigger's tests (migration 19, ranges of the integer `pos` key) as key probes; the
 * step exists so both backends keep one numbering (postgres-033-audit-heads-probe.ts says why
 * PostgreSQL needed it).
 */
import type { Migration } from '../../migrations.js';

export const SQLITE_MIGRATION_033_AUDIT_HEADS_PROBE: readonly Migration[] = [
  { version: 33, name: 'audit_heads_probe', up: async () => {} },
];
