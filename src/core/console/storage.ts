/** The console's stored secrets, settings and SSO identities. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { CONSOLE_APP_ROLE_GRANTS, CONSOLE_GLOBAL_TABLES, CONSOLE_TENANT_TABLES } from '../../store/schema-console.js';
import { SQLITE_MIGRATION_024_CONSOLE } from '../../store/sqlite/migrations/sqlite-024-console.js';
import { POSTGRES_MIGRATION_024_CONSOLE } from '../../store/postgres/migrations/postgres-024-console.js';

export const consoleStorage: ModuleStorage = {
  name: 'console',
  tables: tablesOf(CONSOLE_TENANT_TABLES, CONSOLE_GLOBAL_TABLES, CONSOLE_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_024_CONSOLE],
    postgres: [...POSTGRES_MIGRATION_024_CONSOLE],
  },
};
