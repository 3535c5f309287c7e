/**
 * The audit intent scope of mutating requests (serve/audit-scope.ts, ledger/audit-intent.ts) with a
 * real ledger on a real store: a change and its record leave no marker; a handler that fails after
 * committing, or whose record the ledger refuses, gets a recovery record naming the request; reads
 * and changes that roll back write nothing; stale markers of another process wait for the
 * threshold on a store with several writer processes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { pino } from 'pino';
import { App } from '../../src/http/app.js';
import { PUBLIC, route, type AnyRoute } from '../../src/contract/route.js';
import { errors } from '../../src/contract/errors.js';
import { newIntentScope, RECOVERED_ACTION, runInIntentScope } from '../../src/ledger/audit-intent.js';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { readRange } from '../../src/ledger/ledger-store.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { uuid7 } from '../../src/ledger/uuid7.js';
import { auditScopeAround } from '../../src/serve/audit-scope.js';
import type { Services } from '../../src/serve/services.js';
import type { Store } from '../../src/store/store.js';
import { testStores } from '../helpers/stores.js';
import { TENANT } from '../ledger/fixtures.js';

const log = pino({ level: 'silent' });

async function addAgent(store: Store, name: string): Promise<string> {
  const id = uuid7();
  const now = nowTimestamp();
  await store.withTenant(TENANT, (tx) =>
    tx
      .insertInto('agents')
      .values({
        id,
        tenant_id: TENANT,
        name,
        kind: 'agent',
        external_id: '',
        status: 'active',
        version: 1,
        created_at: now,
        updated_at: now,
      })
      .execute(),
  );
  return id;
}

async function markers(store: Store): Promise<number> {
  const r = await store.transaction((tx) => sql<{ n: number }>`select count(*) as n from audit_intents`.execute(tx));
  return Number(r.rows[0]?.n);
}

/** Waits until `check` holds (the recovery runs after the response). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('condition not reached in 2 s');
}

for (const b of await testStores()) {
  describe(`${b.backend}: audit intent scope of mutating requests`, { skip: b.skip }, () => {
    test('changes with their record leave nothing; a failure after commit, or a refused record, is recorded as recovered', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      await ts.store.transaction((tx) =>
        tx
          .insertInto('tenants')
          .values({ id: TENANT, name: 't', region: 'eu', status: 'active', created_at: nowTimestamp(), deleted_at: null })
          .execute(),
      );
      const ledger = await LedgerService.open({
        store: ts.store,
        dataDir: ts.config.dataDir,
        threads: 0,
        checkpointIntervalMs: 0,
        env: {},
        intentRecovery: { intervalMs: 0 },
      });
      t.after(() => ledger.close());
      let refuse = false;
      const sink = {
        append: (tenant: string, draft: Parameters<LedgerService['sink']['append']>[1]) =>
          refuse ? Promise.reject(errors.unavailable('ledger refused')) : ledger.sink.append(tenant, draft),
      };
      const common = { stability: 'stable' as const, summary: 's', permission: PUBLIC, setupExempt: true };
      const routes: AnyRoute[] = [
        route({
          ...common,
          audit: 'agent.create',
          method: 'POST',
          path: '/ok',
          operationId: 'ok',
          handler: async (ctx) => {
            const id = await addAgent(ts.store, 'ok');
            await ctx.audit({ kind: 'agent', id }, undefined, { chain: TENANT, as: { user: undefined } });
            return { id };
          },
        }),
        route({
          ...common,
          audit: 'agent.create',
          method: 'POST',
          path: '/fails-after-commit',
          operationId: 'fails',
          handler: async () => {
            await addAgent(ts.store, 'half');
            throw errors.conflict('something after the commit went wrong');
          },
        }),
        route({
          ...common,
          audit: 'agent.update',
          method: 'POST',
          path: '/rolls-back',
          operationId: 'rollsBack',
          handler: async () => {
            await ts.store.withTenant(TENANT, async (tx) => {
              await tx.updateTable('agents').set({ name: 'never' }).execute();
              throw errors.conflict('rolled back');
            });
          },
        }),
        route({
          ...common,
          audit: 'agent.create',
          method: 'POST',
          path: '/refused',
          operationId: 'refused',
          handler: async (ctx) => {
            const id = await addAgent(ts.store, 'refused');
            await ctx.audit({ kind: 'agent', id }, undefined, { chain: TENANT, as: { user: undefined } });
          },
        }),
        route({
          ...common,
          method: 'POST',
          path: '/challenge',
          operationId: 'challenge',
          unaudited: 'an ephemeral write, like a WebAuthn challenge',
          handler: async () => ({ id: await addAgent(ts.store, 'ephemeral write, no audit action') }),
        }),
        route({
          ...common,
          method: 'GET',
          path: '/read',
          operationId: 'read',
          handler: async () => ts.store.withTenant(TENANT, (tx) => tx.selectFrom('agents').select('id').execute()),
        }),
      ];
      const app = new App({
        routes,
        services: { audit: sink } as unknown as Services,
        log,
        tls: true,
        bodyLimit: 1024,
        timeoutMs: 5000,
        aroundMutation: auditScopeAround(ledger, log),
      });
      const records = () => ts.store.withTenant(TENANT, (tx) => readRange(tx, TENANT, 1, 1000));

      assert.equal((await app.request('POST', '/ok')).status, 200);
      assert.equal((await app.request('GET', '/read')).status, 200);
      assert.equal((await app.request('POST', '/rolls-back')).status, 409);
      assert.equal((await app.request('POST', '/challenge')).status, 200);
      assert.equal(
        await markers(ts.store),
        0,
        'a change with its record, a read, a rollback and a route without an audit action leave no marker',
      );
      assert.deepEqual((await records()).map((r) => r.action), ['agent.create']);

      const failed = await app.request('POST', '/fails-after-commit', { headers: { 'x-request-id': 'req-half-1' } });
      assert.equal(failed.status, 409);
      await eventually(async () => (await records()).length === 2);
      const rec = (await records())[1];
      assert.equal(rec?.action, RECOVERED_ACTION);
      assert.equal(rec?.target_kind, 'request');
      assert.equal(rec?.target_id, 'req-half-1');
      const meta = JSON.parse(rec?.meta as string) as Record<string, unknown>;
      assert.equal(meta['route'], 'POST /fails-after-commit');
      assert.equal(meta['changes'], 1);
      assert.deepEqual(meta['tenants'], [TENANT]);
      assert.equal(await markers(ts.store), 0);

      refuse = true;
      assert.equal((await app.request('POST', '/refused', { headers: { 'x-request-id': 'req-refused' } })).status, 503);
      refuse = false;
      await eventually(async () => (await records()).some((r) => r.target_id === 'req-refused'));
      assert.equal(await markers(ts.store), 0);
    });

    test(
      'markers of another process wait for the stale threshold where several processes write; a restart of a single writer records ' +
        'them at once',
      async (t) => {
        const ts = await b.create();
        t.after(() => ts.dispose());
        await ts.store.migrate();
        await ts.store.transaction((tx) =>
          tx
            .insertInto('tenants')
            .values({ id: TENANT, name: 't', region: 'eu', status: 'active', created_at: nowTimestamp(), deleted_at: null })
            .execute(),
        );
        // A change committed in a request of a process that then died, before its record.
        await runInIntentScope(
          newIntentScope({ requestId: 'req-died', route: 'PATCH /v1/agents/{id}', actor: 'user:x', actorKind: 'user' }),
          () => addAgent(ts.store, 'orphan'),
        );
        assert.equal(await markers(ts.store), 1);
        const ledger = await LedgerService.open({
          store: ts.store,
          dataDir: ts.config.dataDir,
          threads: 0,
          checkpointIntervalMs: 0,
          env: {},
          intentRecovery: { intervalMs: 0, staleMs: 60_000 },
        });
        t.after(() => ledger.close());
        const recorded = async () =>
          (await ts.store.withTenant(TENANT, (tx) => readRange(tx, TENANT, 1, 1000))).filter((r) => r.action === RECOVERED_ACTION);
        if (ts.store.capabilities.supportsConcurrentWriters) {
          assert.equal((await recorded()).length, 0, 'a fresh marker may belong to a request in flight on another replica');
          assert.equal(await ledger.recoverStale(60_000), 0);
          assert.equal(await ledger.recoverStale(0), 1, 'once stale it is recorded');
        }
        const r = await recorded();
        assert.equal(r.length, 1);
        assert.equal(r[0]?.target_id, 'req-died');
        assert.equal(r[0]?.actor, 'user:x');
        assert.equal(await markers(ts.store), 0);
      },
    );
  });
}
