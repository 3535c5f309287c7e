/** The agents area's tables: migration 1 made `tenants` and `agents` together, so both are declared here. */
import { type ModuleStorage } from '../../store/module-storage.js';
import { SQLITE_MIGRATION_001_TENANTS_AGENTS } from '../../store/sqlite/migrations/sqlite-001-tenants-agents.js';
import { POSTGRES_MIGRATION_001_TENANTS_AGENTS } from '../../store/postgres/migrations/postgres-001-tenants-agents.js';

export const agentsStorage: ModuleStorage = {
  name: 'agents',
  // `tenants` has no DELETE: tenants are soft-deleted (`deleted_at`) so their audit chain stays verifiable.
  tables: [
    { name: 'tenants', scope: 'global', grants: ['select', 'insert', 'update'], rls: false },
    { name: 'agents', scope: 'tenant', grants: ['select', 'insert', 'update', 'delete'], rls: true },
  ],
  migrations: {
    sqlite: [...SQLITE_MIGRATION_001_TENANTS_AGENTS],
    postgres: [...POSTGRES_MIGRATION_001_TENANTS_AGENTS],
  },
};
