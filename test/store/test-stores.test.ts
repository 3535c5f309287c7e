import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { pgQuery, pgTestDsn } from '../helpers/pg.js';
import { selectedBackends, testStores } from '../helpers/stores.js';
import { addTenant } from './store-fixtures.js';

// The helper other areas loop over must hand out isolated stores and leave nothing behind.
for (const b of await testStores()) {
  describe(`${b.backend}: test store factory`, { skip: b.skip ?? false }, () => {
    it('creates an isolated empty store and dispose removes its data', async () => {
      const [one, two] = [await b.create(), await b.create()];
      try {
        await one.store.migrate();
        await two.store.migrate();
        await addTenant(one.store);
        const inTwo = await two.store.transaction((tx) => tx.selectFrom('tenants').select('id').execute());
        assert.deepEqual(inTwo, []);
      } finally {
        await two.dispose();
      }
      await one.dispose();
      if (b.backend === 'sqlite') {
        assert.equal(existsSync(one.config.dataDir), false);
      } else {
        const target = await pgTestDsn();
        const db = new URL(one.config.dsn as string).pathname.slice(1);
        const left = await pgQuery(target.dsn as string, 'select 1 from pg_database where datname = $1', [db]);
        assert.deepEqual(left, []);
      }
    });
  });
}

describe('SVC_TEST_STORES', () => {
  it('narrows the backends and rejects unknown names', () => {
    assert.deepEqual([...selectedBackends({})].sort(), ['postgres', 'sqlite']);
    assert.deepEqual([...selectedBackends({ SVC_TEST_STORES: 'sqlite' })], ['sqlite']);
    assert.deepEqual([...selectedBackends({ SVC_TEST_STORES: ' postgres , sqlite ' })].sort(), ['postgres', 'sqlite']);
    assert.throws(() => selectedBackends({ SVC_TEST_STORES: 'mysql' }), /unknown backend "mysql"/);
  });
});
