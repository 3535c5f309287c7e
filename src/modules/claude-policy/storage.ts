/** Host check-ins and the capability configurations (the capabilities module reads them through its service). */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import {
  CLAUDE_POLICY_APP_ROLE_GRANTS,
  CLAUDE_POLICY_GLOBAL_TABLES,
  CLAUDE_POLICY_TENANT_TABLES,
} from '../../store/schema-claude-policy.js';
import { SQLITE_MIGRATION_028_CLAUDE_POLICY } from '../../store/sqlite/migrations/sqlite-028-claude-policy.js';
import { POSTGRES_MIGRATION_028_CLAUDE_POLICY } from '../../store/postgres/migrations/postgres-028-claude-policy.js';

export const claudePolicyStorage: ModuleStorage = {
  name: 'claude-policy',
  tables: tablesOf(CLAUDE_POLICY_TENANT_TABLES, CLAUDE_POLICY_GLOBAL_TABLES, CLAUDE_POLICY_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_028_CLAUDE_POLICY],
    postgres: [...POSTGRES_MIGRATION_028_CLAUDE_POLICY],
  },
};
