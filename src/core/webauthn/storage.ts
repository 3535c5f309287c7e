/** The WebAuthn credentials and challenges (global, like the identity tables). */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { WEBAUTHN_APP_ROLE_GRANTS, WEBAUTHN_GLOBAL_TABLES, WEBAUTHN_TENANT_TABLES } from '../../store/schema-webauthn.js';
import { SQLITE_MIGRATION_004_WEBAUTHN } from '../../store/sqlite/migrations/sqlite-004-webauthn.js';
import { POSTGRES_MIGRATION_004_WEBAUTHN } from '../../store/postgres/migrations/postgres-004-webauthn.js';

export const webauthnStorage: ModuleStorage = {
  name: 'webauthn',
  tables: tablesOf(WEBAUTHN_TENANT_TABLES, WEBAUTHN_GLOBAL_TABLES, WEBAUTHN_APP_ROLE_GRANTS),
  migrations: {
    sqlite: [...SQLITE_MIGRATION_004_WEBAUTHN],
    postgres: [...POSTGRES_MIGRATION_004_WEBAUTHN],
  },
};
