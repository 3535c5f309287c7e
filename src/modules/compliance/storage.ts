/** Legal holds, erasure requests and their custody trail. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { COMPLIANCE_APP_ROLE_GRANTS, COMPLIANCE_GLOBAL_TABLES, COMPLIANCE_TENANT_TABLES } from '../../store/schema-compliance.js';
import { SQLITE_MIGRATION_025_COMPLIANCE } from '../../store/sqlite/migrations/sqlite-025-compliance.js';
import { POSTGRES_MIGRATION_025_COMPLIANCE } from '../../store/postgres/migrations/postgres-025-compliance.js';
import { SQLITE_MIGRATION_036_HOLD_REFERENCES } from '../../store/sqlite/migrations/sqlite-036-hold-references.js';
import { POSTGRES_MIGRATION_036_HOLD_REFERENCES } from '../../store/postgres/migrations/postgres-036-hold-references.js';

export const complianceStorage: ModuleStorage = {
  name: 'compliance',
  tables: tablesOf(COMPLIANCE_TENANT_TABLES, COMPLIANCE_GLOBAL_TABLES, COMPLIANCE_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_025_COMPLIANCE, ...SQLITE_MIGRATION_036_HOLD_REFERENCES],
    postgres: [...POSTGRES_MIGRATION_025_COMPLIANCE, ...POSTGRES_MIGRATION_036_HOLD_REFERENCES],
  },
};
