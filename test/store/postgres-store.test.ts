import { runStoreCases } from './store.cases.js';
import { pgTestDsn } from '../helpers/pg.js';
import { createPostgresTestStore, selectedBackends } from '../helpers/stores.js';

const target = selectedBackends().has('postgres')
  ? await pgTestDsn()
  : { skip: `SVC_TEST_STORES=${process.env['SVC_TEST_STORES']} excludes postgres` };

runStoreCases({
  name: 'postgres',
  create: (overrides) => {
    if (target.dsn === undefined) throw new Error(target.skip);
    return createPostgresTestStore(target.dsn, overrides);
  },
  skip: target.skip,
});
