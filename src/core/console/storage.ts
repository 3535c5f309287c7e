/** The console's stored secrets, settings, SSO identities and pending SSO logins. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { CONSOLE_APP_ROLE_GRANTS, CONSOLE_GLOBAL_TABLES, CONSOLE_TENANT_TABLES } from '../../store/schema-console.js';
import { SQLITE_MIGRATION_024_CONSOLE } from '../../store/sqlite/migrations/sqlite-024-console.js';
import { POSTGRES_MIGRATION_024_CONSOLE } from '../../store/postgres/migrations/postgres-024-console.js';
import { SQLITE_MIGRATION_034_SSO_PENDING } from '../../store/sqlite/migrations/sqlite-034-sso-pending.js';
import { POSTGRES_MIGRATION_034_SSO_PENDING } from '../../store/postgres/migrations/postgres-034-sso-pending.js';

export const consoleStorage: ModuleStorage = {
  name: 'console',
  tables: tablesOf(CONSOLE_TENANT_TABLES, CONSOLE_GLOBAL_TABLES, CONSOLE_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_024_CONSOLE, ...SQLITE_MIGRATION_034_SSO_PENDING],
    postgres: [...POSTGRES_MIGRATION_024_CONSOLE, ...POSTGRES_MIGRATION_034_SSO_PENDING],
  },
};
