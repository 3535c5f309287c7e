import { runStoreCases, STORE_CASES, TENANT_ISOLATION_CASES } from './store.cases.js';
import { createSqliteTestStore, selectedBackends } from '../helpers/stores.js';

const NOT_SUPPORTED_RLS = 'SQLite has no row-level security (capabilities.supportsRls = false); isolation rests on query filters';

runStoreCases({
  name: 'sqlite',
  create: createSqliteTestStore,
  skip: selectedBackends().has('sqlite')
    ? [
        { reason: NOT_SUPPORTED_RLS, tests: Object.values(TENANT_ISOLATION_CASES) },
        {
          reason:
            'better-sqlite3 is synchronous: two stores on one file in one thread block each other; migrators in separate processes ' +
            'are covered by test/store/sqlite/sqlite-store.test.ts',
          tests: [STORE_CASES.concurrentMigrators],
        },
      ]
    : `SVC_TEST_STORES=${process.env['SVC_TEST_STORES']} excludes sqlite`,
});
