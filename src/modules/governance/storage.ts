/** Approvals, their decisions and signed policy revisions. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { GOVERNANCE_APP_ROLE_GRANTS, GOVERNANCE_GLOBAL_TABLES, GOVERNANCE_TENANT_TABLES } from '../../store/schema-governance.js';
import { SQLITE_MIGRATION_022_GOVERNANCE } from '../../store/sqlite/migrations/sqlite-022-governance.js';
import { POSTGRES_MIGRATION_022_GOVERNANCE } from '../../store/postgres/migrations/postgres-022-governance.js';
import { SQLITE_MIGRATION_035_KILL_SWITCH_REFERENCES } from '../../store/sqlite/migrations/sqlite-035-kill-switch-references.js';
import { POSTGRES_MIGRATION_035_KILL_SWITCH_REFERENCES } from '../../store/postgres/migrations/postgres-035-kill-switch-references.js';

export const governanceStorage: ModuleStorage = {
  name: 'governance',
  tables: tablesOf(GOVERNANCE_TENANT_TABLES, GOVERNANCE_GLOBAL_TABLES, GOVERNANCE_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_022_GOVERNANCE, ...SQLITE_MIGRATION_035_KILL_SWITCH_REFERENCES],
    postgres: [...POSTGRES_MIGRATION_022_GOVERNANCE, ...POSTGRES_MIGRATION_035_KILL_SWITCH_REFERENCES],
  },
};
