/** The output connectors, their cursors and the console's log sources. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { CONNECTOR_APP_ROLE_GRANTS, CONNECTOR_GLOBAL_TABLES, CONNECTOR_TENANT_TABLES } from '../../store/schema-connectors.js';
import { SQLITE_MIGRATION_026_CONNECTORS } from '../../store/sqlite/migrations/sqlite-026-connectors.js';
import { POSTGRES_MIGRATION_026_CONNECTORS } from '../../store/postgres/migrations/postgres-026-connectors.js';

export const connectorsStorage: ModuleStorage = {
  name: 'connectors',
  tables: tablesOf(CONNECTOR_TENANT_TABLES, CONNECTOR_GLOBAL_TABLES, CONNECTOR_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_026_CONNECTORS],
    postgres: [...POSTGRES_MIGRATION_026_CONNECTORS],
  },
};
