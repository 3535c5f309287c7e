/** The audit ledger's tables: records, chain heads, intent markers (migration 20 is a reserved no-op kept with them). */
import { type ModuleStorage } from '../../store/module-storage.js';
import { SQLITE_MIGRATION_003_LEDGER } from '../../store/sqlite/migrations/sqlite-003-ledger.js';
import { SQLITE_MIGRATION_007_AUDIT_INTENTS } from '../../store/sqlite/migrations/sqlite-007-audit-intents.js';
import { SQLITE_MIGRATION_019_AUDIT_HEADS_FORWARD } from '../../store/sqlite/migrations/sqlite-019-audit-heads-forward.js';
import { SQLITE_MIGRATION_020_RESERVED } from '../../store/sqlite/migrations/sqlite-020-reserved.js';
import { SQLITE_MIGRATION_029_LEDGER_ERASURE } from '../../store/sqlite/migrations/sqlite-029-ledger-erasure.js';
import { SQLITE_MIGRATION_033_AUDIT_HEADS_PROBE } from '../../store/sqlite/migrations/sqlite-033-audit-heads-probe.js';
import { POSTGRES_MIGRATION_003_LEDGER } from '../../store/postgres/migrations/postgres-003-ledger.js';
import { POSTGRES_MIGRATION_007_AUDIT_INTENTS } from '../../store/postgres/migrations/postgres-007-audit-intents.js';
import { POSTGRES_MIGRATION_019_AUDIT_HEADS_FORWARD } from '../../store/postgres/migrations/postgres-019-audit-heads-forward.js';
import { POSTGRES_MIGRATION_020_RESERVED } from '../../store/postgres/migrations/postgres-020-reserved.js';
import { POSTGRES_MIGRATION_029_LEDGER_ERASURE } from '../../store/postgres/migrations/postgres-029-ledger-erasure.js';
import { POSTGRES_MIGRATION_033_AUDIT_HEADS_PROBE } from '../../store/postgres/migrations/postgres-033-audit-heads-probe.js';

export const auditStorage: ModuleStorage = {
  name: 'audit',
  tables: [
    // Append-only ledger: no UPDATE/DELETE on records (triggers block them too); heads only move forward.
    { name: 'audit_records', scope: 'tenant', grants: ['select', 'insert'], rls: true },
    { name: 'audit_heads', scope: 'tenant', grants: ['select', 'insert', 'update'], rls: true },
    // Markers live for one request: written with a change, deleted with its audit record.
    { name: 'audit_intents', scope: 'global', grants: ['select', 'insert', 'delete'], rls: false },
  ],
  migrations: {
    sqlite: [
      ...SQLITE_MIGRATION_003_LEDGER,
      ...SQLITE_MIGRATION_007_AUDIT_INTENTS,
      ...SQLITE_MIGRATION_019_AUDIT_HEADS_FORWARD,
      ...SQLITE_MIGRATION_020_RESERVED,
      ...SQLITE_MIGRATION_029_LEDGER_ERASURE,
      ...SQLITE_MIGRATION_033_AUDIT_HEADS_PROBE,
    ],
    postgres: [
      ...POSTGRES_MIGRATION_003_LEDGER,
      ...POSTGRES_MIGRATION_007_AUDIT_INTENTS,
      ...POSTGRES_MIGRATION_019_AUDIT_HEADS_FORWARD,
      ...POSTGRES_MIGRATION_020_RESERVED,
      ...POSTGRES_MIGRATION_029_LEDGER_ERASURE,
      ...POSTGRES_MIGRATION_033_AUDIT_HEADS_PROBE,
    ],
  },
};
