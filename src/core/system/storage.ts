/** State shared by the replicas of one deployment: keyring, setup token, login failures, rate limits, replicas, secrets key check. */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { REPLICA_APP_ROLE_GRANTS, REPLICA_GLOBAL_TABLES, REPLICA_TENANT_TABLES } from '../../store/schema-replicas.js';
import { SQLITE_MIGRATION_027_REPLICAS } from '../../store/sqlite/migrations/sqlite-027-replicas.js';
import { SQLITE_MIGRATION_031_REPLICA_LIMITS } from '../../store/sqlite/migrations/sqlite-031-replica-limits.js';
import { SQLITE_MIGRATION_037_SECRETS_KEY_CHECK } from '../../store/sqlite/migrations/sqlite-037-secrets-key-check.js';
import { POSTGRES_MIGRATION_027_REPLICAS } from '../../store/postgres/migrations/postgres-027-replicas.js';
import { POSTGRES_MIGRATION_031_REPLICA_LIMITS } from '../../store/postgres/migrations/postgres-031-replica-limits.js';
import { POSTGRES_MIGRATION_037_SECRETS_KEY_CHECK } from '../../store/postgres/migrations/postgres-037-secrets-key-check.js';

export const systemStorage: ModuleStorage = {
  name: 'system',
  tables: tablesOf(REPLICA_TENANT_TABLES, REPLICA_GLOBAL_TABLES, REPLICA_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_027_REPLICAS, ...SQLITE_MIGRATION_031_REPLICA_LIMITS, ...SQLITE_MIGRATION_037_SECRETS_KEY_CHECK],
    postgres: [...POSTGRES_MIGRATION_027_REPLICAS, ...POSTGRES_MIGRATION_031_REPLICA_LIMITS, ...POSTGRES_MIGRATION_037_SECRETS_KEY_CHECK],
  },
};
