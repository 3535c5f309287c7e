/** Database-enforced tenant isolation (ARCHITECTURE "Storage"): where `supportsRls`, a query bug cannot cross tenants. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { addAgents, addTenant, agentRow } from './store-fixtures.js';
import { caseRunner, isSkipped, type StoreCaseOptions } from './store-case-kit.js';

/** Titles of the isolation cases, for skip lists of backends without RLS. */
export const TENANT_ISOLATION_CASES = {
  unfilteredSelect: 'rls: a query without a tenant filter in withTenant(A) sees only A rows',
  unboundFails: 'rls: an unbound transaction touching a tenant table fails instead of returning rows',
  withCheck: 'rls: WITH CHECK rejects writing a row of another tenant inside withTenant(A)',
  updateDelete: 'rls: unfiltered update and delete in withTenant(A) leave B rows untouched',
  appRole: 'rls: every transaction runs as the non-owner app role',
  bindingIsLocal: 'rls: the tenant binding does not outlive its transaction on a pooled connection',
} as const;

const cases = TENANT_ISOLATION_CASES;

/** Registers the isolation cases; a backend without RLS lists them in its skip cells. */
export function runTenantIsolationCases(options: StoreCaseOptions): void {
  const suiteSkip = typeof options.skip === 'string' ? options.skip : false;
  const test = caseRunner(options);

  describe(`${options.name}: tenant isolation`, { skip: suiteSkip }, () => {
    // A skip must be honest: the cells skipped here are exactly the ones the backend cannot enforce.
    it('capabilities.supportsRls agrees with the skipped isolation cells', async () => {
      const h = await options.create();
      try {
        const skipped = Object.values(cases).filter((t) => isSkipped(options, t));
        assert.equal(h.store.capabilities.supportsRls, skipped.length === 0);
        if (!h.store.capabilities.supportsRls) assert.equal(skipped.length, Object.values(cases).length);
      } finally {
        await h.dispose();
      }
    });

    test(cases.unfilteredSelect, async ({ store }) => {
      await store.migrate();
      const [a, b] = [await addTenant(store), await addTenant(store)];
      const idsA = await addAgents(store, a, 3);
      const idsB = await addAgents(store, b, 2);
      // The bug under test: no `where tenant_id = …` at all.
      const seenByA = await store.withTenant(a, (tx) => tx.selectFrom('agents').selectAll().execute());
      assert.deepEqual(seenByA.map((r) => r.id).sort(), [...idsA].sort());
      assert.ok(seenByA.every((r) => r.tenant_id === a));
      const raw = await store.withTenant(a, (tx) => sql<{ n: string }>`select count(*) as n from agents`.execute(tx));
      assert.equal(Number(raw.rows[0]?.n), 3);
      const direct = await store.withTenant(a, (tx) => tx.selectFrom('agents').select('id').where('id', 'in', idsB).execute());
      assert.deepEqual(direct, []);
      const seenByB = await store.withTenant(b, (tx) => tx.selectFrom('agents').select('id').execute());
      assert.deepEqual(seenByB.map((r) => r.id).sort(), [...idsB].sort());
    });

    test(cases.unboundFails, async ({ store }) => {
      await store.migrate();
      const a = await addTenant(store);
      await addAgents(store, a, 2);
      await assert.rejects(store.transaction((tx) => tx.selectFrom('agents').selectAll().execute()));
      await assert.rejects(store.transaction((tx) => tx.insertInto('agents').values(agentRow(a)).execute()));
      // Global tables stay reachable from the unbound transaction.
      const tenants = await store.transaction((tx) => tx.selectFrom('tenants').select('id').execute());
      assert.deepEqual(tenants, [{ id: a }]);
    });

    test(cases.withCheck, async ({ store }) => {
      await store.migrate();
      const [a, b] = [await addTenant(store), await addTenant(store)];
      await assert.rejects(
        store.withTenant(a, (tx) => tx.insertInto('agents').values(agentRow(b)).execute()),
        /row-level security/,
      );
      const [idA] = await addAgents(store, a, 1);
      // Moving a row to another tenant is a write of B's row too.
      await assert.rejects(
        store.withTenant(a, (tx) => tx.updateTable('agents').set({ tenant_id: b }).where('id', '=', idA as string).execute()),
        /row-level security/,
      );
      const inB = await store.withTenant(b, (tx) => tx.selectFrom('agents').select('id').execute());
      assert.deepEqual(inB, []);
    });

    test(cases.updateDelete, async ({ store }) => {
      await store.migrate();
      const [a, b] = [await addTenant(store), await addTenant(store)];
      await addAgents(store, a, 2);
      const idsB = await addAgents(store, b, 2);
      const updated = await store.withTenant(a, (tx) => tx.updateTable('agents').set({ name: 'renamed' }).executeTakeFirst());
      assert.equal(Number(updated.numUpdatedRows), 2);
      const deleted = await store.withTenant(a, (tx) => tx.deleteFrom('agents').executeTakeFirst());
      assert.equal(Number(deleted.numDeletedRows), 2);
      const rowsB = await store.withTenant(b, (tx) => tx.selectFrom('agents').select(['id', 'name']).orderBy('id').execute());
      assert.deepEqual(rowsB.map((r) => r.id), [...idsB].sort());
      assert.ok(rowsB.every((r) => r.name !== 'renamed'));
    });

    test(cases.appRole, async ({ store, admin }) => {
      await store.migrate();
      const a = await addTenant(store);
      const who = async (run: typeof store.transaction) =>
        (await run((tx) => sql<{ current_user: string; session_user: string }>`select current_user, session_user`.execute(tx))).rows[0];
      const bound = await who((fn) => store.withTenant(a, fn));
      const unbound = await who((fn) => store.transaction(fn));
      const [owner] = await admin.query<{ owner: string }>(`select tableowner as owner from pg_tables where tablename = 'agents'`);
      for (const w of [bound, unbound]) {
        assert.ok(w);
        assert.equal(w.current_user, process.env['SERVICE_PG_APP_ROLE'] ?? 'svc_app');
        assert.notEqual(w.current_user, owner?.owner);
        assert.notEqual(w.current_user, w.session_user);
      }
    });

    test(
      cases.bindingIsLocal,
      async ({ store }) => {
        await store.migrate();
        const [a, b] = [await addTenant(store), await addTenant(store)];
        await addAgents(store, a, 1);
        const [idB] = await addAgents(store, b, 1);
        // poolSize 1: every transaction below reuses the connection that was just bound to A.
        await store.withTenant(a, (tx) => tx.selectFrom('agents').select('id').execute());
        await assert.rejects(store.transaction((tx) => tx.selectFrom('agents').select('id').execute()));
        const seen = await store.withTenant(b, (tx) => tx.selectFrom('agents').select('id').execute());
        assert.deepEqual(seen, [{ id: idB }]);
        await assert.rejects(store.withTenant(a, async () => Promise.reject(new Error('abort'))));
        const who = await store.transaction((tx) => sql<{ t: string }>`select current_setting('app.tenant_id', true) as t`.execute(tx));
        assert.equal(who.rows[0]?.t, '');
      },
      { poolSize: 1 },
    );
  });
}
