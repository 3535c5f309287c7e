import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { StoreError } from './store-error.js';
import type { Store, StoreConfig, StoreLog } from './store-types.js';

export type * from './store-types.js';

const silentLog: StoreLog = { info() {}, warn() {} };

/** Opens the configured backend; call `migrate()` before serving. */
export async function openStore(config: StoreConfig, log: StoreLog = silentLog): Promise<Store> {
  switch (config.backend) {
    case 'sqlite':
      return openSqliteStore(config, log);
    case 'postgres':
      return openPostgresStore(config, log);
    default:
      throw new StoreError('invalid_config', `unknown store backend ${JSON.stringify(config.backend)} (sqlite|postgres)`);
  }
}
