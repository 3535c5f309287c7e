/** The output connectors, their cursors and the console's log sources. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { CONNECTOR_APP_ROLE_GRANTS, CONNECTOR_GLOBAL_TABLES, CONNECTOR_TENANT_TABLES } from '../../store/schema-connectors.js';
import { SQLITE_MIGRATION_026_CONNECTORS } from '../../store/sqlite/migrations/sqlite-026-connectors.js';
import { POSTGRES_MIGRATION_026_CONNECTORS } from '../../store/postgres/migrations/postgres-026-connectors.js';
import { SQLITE_MIGRATION_032_CONNECTOR_SYSTEM_LANE } from '../../store/sqlite/migrations/sqlite-032-connector-system-lane.js';
import { POSTGRES_MIGRATION_032_CONNECTOR_SYSTEM_LANE } from '../../store/postgres/migrations/postgres-032-connector-system-lane.js';

export const connectorsStorage: ModuleStorage = {
  name: 'connectors',
  tables: tablesOf(CONNECTOR_TENANT_TABLES, CONNECTOR_GLOBAL_TABLES, CONNECTOR_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_026_CONNECTORS, ...SQLITE_MIGRATION_032_CONNECTOR_SYSTEM_LANE],
    postgres: [...POSTGRES_MIGRATION_026_CONNECTORS, ...POSTGRES_MIGRATION_032_CONNECTOR_SYSTEM_LANE],
  },
};
