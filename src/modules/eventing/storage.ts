/** The durable event log, subscriptions, deliveries and the egress fence. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { EVENTING_APP_ROLE_GRANTS, EVENTING_GLOBAL_TABLES, EVENTING_TENANT_TABLES } from '../../store/schema-eventing.js';
import { SQLITE_MIGRATION_023_EVENTING } from '../../store/sqlite/migrations/sqlite-023-eventing.js';
import { SQLITE_MIGRATION_030_EGRESS_FENCE } from '../../store/sqlite/migrations/sqlite-030-egress-fence.js';
import { POSTGRES_MIGRATION_023_EVENTING } from '../../store/postgres/migrations/postgres-023-eventing.js';
import { POSTGRES_MIGRATION_030_EGRESS_FENCE } from '../../store/postgres/migrations/postgres-030-egress-fence.js';

export const eventingStorage: ModuleStorage = {
  name: 'eventing',
  tables: tablesOf(EVENTING_TENANT_TABLES, EVENTING_GLOBAL_TABLES, EVENTING_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_023_EVENTING, ...SQLITE_MIGRATION_030_EGRESS_FENCE],
    postgres: [...POSTGRES_MIGRATION_023_EVENTING, ...POSTGRES_MIGRATION_030_EGRESS_FENCE],
  },
};
