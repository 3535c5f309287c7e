/** The security module's findings and ingest marks. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { SECURITY_APP_ROLE_GRANTS, SECURITY_GLOBAL_TABLES, SECURITY_TENANT_TABLES } from '../../store/schema-security.js';
import { SQLITE_MIGRATION_021_SECURITY_FINDINGS } from '../../store/sqlite/migrations/sqlite-021-security-findings.js';
import { POSTGRES_MIGRATION_021_SECURITY_FINDINGS } from '../../store/postgres/migrations/postgres-021-security-findings.js';

export const securityStorage: ModuleStorage = {
  name: 'security',
  tables: tablesOf(SECURITY_TENANT_TABLES, SECURITY_GLOBAL_TABLES, SECURITY_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_021_SECURITY_FINDINGS],
    postgres: [...POSTGRES_MIGRATION_021_SECURITY_FINDINGS],
  },
};
