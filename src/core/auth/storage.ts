/** The identity tables (users, memberships, sessions, API tokens, setup claim): global, as credentials resolve before a tenant is bound. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { IDENTITY_APP_ROLE_GRANTS, IDENTITY_GLOBAL_TABLES, IDENTITY_TENANT_TABLES } from '../../store/schema-identity.js';
import { SQLITE_MIGRATION_002_IDENTITY } from '../../store/sqlite/migrations/sqlite-002-identity.js';
import { POSTGRES_MIGRATION_002_IDENTITY } from '../../store/postgres/migrations/postgres-002-identity.js';

export const authStorage: ModuleStorage = {
  name: 'auth',
  tables: tablesOf(IDENTITY_TENANT_TABLES, IDENTITY_GLOBAL_TABLES, IDENTITY_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_002_IDENTITY],
    postgres: [...POSTGRES_MIGRATION_002_IDENTITY],
  },
};
