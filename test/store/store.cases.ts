/** The Store contract, run by every backend's test file (STYLE rule 3). */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { sql } from 'kysely';
import { StoreError } from '../../src/store/store-error.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/postgres-migrations.js';
import { addAgents, addTenant, agentRow, tenantRow } from './store-fixtures.js';
import { caseRunner, type StoreCaseOptions } from './store-case-kit.js';
import { runTenantIsolationCases, TENANT_ISOLATION_CASES } from './tenant-isolation.cases.js';

export type { StoreCaseOptions, StoreCaseSkip } from './store-case-kit.js';
export { TENANT_ISOLATION_CASES };

/** Case titles that other files may name in a skip list. */
export const STORE_CASES = {
  concurrentMigrators: 'two stores migrating the same database at once both succeed',
} as const;

/** Every version a backend's migration list holds, ascending (areas reserve numbers, so there may be holes). */
function knownVersions(backend: string): number[] {
  return (backend === 'sqlite' ? SQLITE_MIGRATIONS : POSTGRES_MIGRATIONS).map((m) => m.version).sort((x, y) => x - y);
}

/** Registers the shared Store cases for one backend. */
export function runStoreCases(options: StoreCaseOptions): void {
  const suiteSkip = typeof options.skip === 'string' ? options.skip : false;
  const test = caseRunner(options);

  describe(`${options.name}: store contract`, { skip: suiteSkip }, () => {
    test('migrate applies every migration once and is idempotent', async ({ store }) => {
      const first = await store.migrate();
      assert.ok(first.current >= 1);
      assert.deepEqual(first.applied, knownVersions(store.backend));
      assert.equal(first.current, Math.max(...knownVersions(store.backend)));
      const second = await store.migrate();
      assert.deepEqual(second, { applied: [], current: first.current });
    });

    test(STORE_CASES.concurrentMigrators, async (h) => {
      const other = await h.reopen();
      const [a, b] = await Promise.all([h.store.migrate(), other.migrate()]);
      assert.equal(a.current, b.current);
      // Every step applied exactly once, by one of the two.
      assert.deepEqual([...a.applied, ...b.applied].sort((x, y) => x - y), knownVersions(h.store.backend));
    });

    test('migrate refuses a database migrated by a newer binary', async ({ store, admin }) => {
      const { current } = await store.migrate();
      await admin.query(
        `insert into schema_migrations (version, name, applied_at) values (${current + 1}, 'from_the_future', ` +
          `'2099-01-01T00:00:00.000000000Z')`,
      );
      await assert.rejects(store.migrate(), (err) => err instanceof StoreError && err.code === 'schema_too_new');
      const ready = await store.readiness();
      assert.equal(ready.ok, false);
      assert.equal(ready.reachable, true);
      assert.deepEqual(ready.migrations, { current: current + 1, expected: current });
      assert.match(ready.error ?? '', /newer|knows only/);
    });

    test('readiness reports pending migrations before migrate and ok after', async ({ store }) => {
      const before = await store.readiness();
      assert.equal(before.ok, false);
      assert.equal(before.reachable, true);
      assert.equal(before.migrations.current, 0);
      assert.ok(before.migrations.expected >= 1);
      await store.migrate();
      const after = await store.readiness();
      assert.deepEqual(after, {
        ok: true,
        reachable: true,
        migrations: { current: before.migrations.expected, expected: before.migrations.expected },
      });
    });

    test('a transaction commits its work and returns the callback value', async ({ store }) => {
      await store.migrate();
      const row = tenantRow({ name: 'Committed' });
      const out = await store.transaction(async (tx) => {
        await tx.insertInto('tenants').values(row).execute();
        return 'done';
      });
      assert.equal(out, 'done');
      const read = await store.transaction((tx) => tx.selectFrom('tenants').selectAll().where('id', '=', row.id).execute());
      assert.deepEqual(read, [row]);
    });

    test('a transaction rolls back when its callback throws', async ({ store }) => {
      await store.migrate();
      const tenant = await addTenant(store);
      const boom = new Error('boom');
      const row = tenantRow();
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.insertInto('tenants').values(row).execute();
          throw boom;
        }),
        (err) => err === boom,
      );
      await assert.rejects(
        store.withTenant(tenant, async (tx) => {
          await tx.insertInto('agents').values(agentRow(tenant)).execute();
          throw boom;
        }),
        (err) => err === boom,
      );
      const tenants = await store.transaction((tx) => tx.selectFrom('tenants').select('id').execute());
      assert.deepEqual(tenants, [{ id: tenant }]);
      const agents = await store.withTenant(tenant, (tx) => tx.selectFrom('agents').select('id').execute());
      assert.deepEqual(agents, []);
    });

    test('withTenant inserts and reads back the tenant rows unchanged', async ({ store }) => {
      await store.migrate();
      const tenant = await addTenant(store);
      const row = agentRow(tenant, { name: 'reviewer', external_id: 'ext-1', version: 3 });
      await store.withTenant(tenant, (tx) => tx.insertInto('agents').values(row).execute());
      const read = await store.withTenant(tenant, (tx) =>
        tx.selectFrom('agents').selectAll().where('tenant_id', '=', tenant).where('id', '=', row.id).executeTakeFirst(),
      );
      // Compare the columns this test wrote: later migrations may add columns with defaults.
      const written = Object.fromEntries(Object.keys(row).map((k) => [k, (read as Record<string, unknown> | undefined)?.[k]]));
      assert.deepEqual(written, row);
    });

    test('insert … returning gives the stored row back', async ({ store }) => {
      assert.equal(store.capabilities.supportsReturning, true);
      await store.migrate();
      const tenant = await addTenant(store);
      const row = agentRow(tenant);
      const back = await store.withTenant(tenant, (tx) =>
        tx.insertInto('agents').values(row).returning(['id', 'version']).executeTakeFirstOrThrow(),
      );
      assert.deepEqual(back, { id: row.id, version: 1 });
    });

    test('withTenant refuses a tenant id that is not a lowercase UUID, before running anything', async ({ store }) => {
      await store.migrate();
      const bad = [
        '',
        'acme',
        "00000000-0000-0000-0000-000000000000' or '1'='1",
        '0192F1A2-3B4C-7D5E-8F60-718293A4B5C6',
        ' 0192f1a2-3b4c-7d5e-8f60-718293a4b5c6',
      ];
      for (const id of bad) {
        let ran = false;
        await assert.rejects(
          store.withTenant(id, async () => {
            ran = true;
          }),
          (err) => err instanceof StoreError && err.code === 'invalid_tenant_id',
          `accepted ${JSON.stringify(id)}`,
        );
        assert.equal(ran, false);
      }
    });

    test('concurrent transactions all commit and increments are not lost', async ({ store }) => {
      await store.migrate();
      const [a, b] = [await addTenant(store), await addTenant(store)];
      const [counter] = await addAgents(store, a, 1);
      const inserts = Array.from({ length: 20 }, (_, i) => {
        const tenant = i % 2 === 0 ? a : b;
        return store.withTenant(tenant, (tx) => tx.insertInto('agents').values(agentRow(tenant, { external_id: `c-${i}` })).execute());
      });
      const bumps = Array.from({ length: 20 }, () =>
        store.withTenant(a, (tx) =>
          tx
            .updateTable('agents')
            .set({ version: sql`version + 1` })
            .where('id', '=', counter as string)
            .execute(),
        ),
      );
      await Promise.all([...inserts, ...bumps]);
      const countA = await store.withTenant(a, (tx) => tx.selectFrom('agents').select('id').where('tenant_id', '=', a).execute());
      const countB = await store.withTenant(b, (tx) => tx.selectFrom('agents').select('id').where('tenant_id', '=', b).execute());
      assert.equal(countA.length, 11);
      assert.equal(countB.length, 10);
      const version = await store.withTenant(a, (tx) =>
        tx
          .selectFrom('agents')
          .select('version')
          .where('id', '=', counter as string)
          .executeTakeFirstOrThrow(),
      );
      assert.equal(version.version, 21);
    });

    test('external_id is unique per tenant; empty and cross-tenant duplicates are allowed', async ({ store }) => {
      await store.migrate();
      const [a, b] = [await addTenant(store), await addTenant(store)];
      const insert = (tenant: string, external_id: string) =>
        store.withTenant(tenant, (tx) => tx.insertInto('agents').values(agentRow(tenant, { external_id })).execute());
      await insert(a, 'ext-1');
      await insert(b, 'ext-1');
      await insert(a, '');
      await insert(a, '');
      await assert.rejects(insert(a, 'ext-1'), /unique|duplicate/i);
    });

    test('rows must carry canonical timestamps, a known tenant status and an existing tenant', async ({ store }) => {
      await store.migrate();
      const ins = (row: ReturnType<typeof tenantRow>) => store.transaction((tx) => tx.insertInto('tenants').values(row).execute());
      await assert.rejects(ins(tenantRow({ created_at: '2026-06-02T10:00:00.000Z' })), /check/i);
      await assert.rejects(ins(tenantRow({ created_at: '2026-06-02 10:00:00.000000000Z' })), /check/i);
      await assert.rejects(ins(tenantRow({ status: 'deleted' as 'active' })), /check/i);
      const ghost = tenantRow().id;
      await assert.rejects(
        store.withTenant(ghost, (tx) => tx.insertInto('agents').values(agentRow(ghost)).execute()),
        /foreign key/i,
      );
    });

    test('data survives close and reopen', async (h) => {
      await h.store.migrate();
      const tenant = await addTenant(h.store);
      const ids = await addAgents(h.store, tenant, 3);
      await h.store.close();
      const again = await h.reopen();
      assert.deepEqual((await again.migrate()).applied, []);
      const read = await again.withTenant(tenant, (tx) =>
        tx.selectFrom('agents').select('id').where('tenant_id', '=', tenant).orderBy('id').execute(),
      );
      assert.deepEqual(read.map((r) => r.id), [...ids].sort());
    });

    test('close is idempotent; afterwards calls reject and readiness is not ok', async ({ store }) => {
      await store.migrate();
      const tenant = await addTenant(store);
      await store.close();
      await store.close();
      const closed = (err: unknown) => err instanceof StoreError && err.code === 'store_closed';
      await assert.rejects(store.transaction(async () => 1), closed);
      await assert.rejects(store.withTenant(tenant, async () => 1), closed);
      await assert.rejects(store.migrate(), closed);
      const ready = await store.readiness();
      assert.equal(ready.ok, false);
      assert.equal(ready.reachable, false);
    });
  });

  runTenantIsolationCases(options);
}
