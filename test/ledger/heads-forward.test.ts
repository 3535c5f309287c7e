/**
 * Issue 30 item 8, on both backends: `audit_heads` only moves forward, one append at a time, and the
 * database enforces it (migration 19) for the app role; a head changed behind the ledger's back
 * (the owner with the triggers off) makes appends to that chain fail without sealing on it, and a
 * mutating request on that chain fails with nothing committed instead of a committed change behind a 500.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { pino } from 'pino';
import { App } from '../../src/http/app.js';
import { PUBLIC, route, type AnyRoute } from '../../src/contract/route.js';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { readHead, readRange } from '../../src/ledger/ledger-store.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { uuid7 } from '../../src/ledger/uuid7.js';
import { auditScopeAround } from '../../src/serve/audit-scope.js';
import type { Services } from '../../src/serve/services.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { draft, TENANT } from './fixtures.js';

const log = pino({ level: 'silent' });

/** The owner moves a head with the heads triggers off (the attacker with database access). */
async function ownerSetsHead(ts: TestStore, tenant: string, seq: number, hash: Buffer): Promise<void> {
  if (ts.backend === 'sqlite') {
    for (const t of ['audit_heads_forward_update', 'audit_heads_forward_insert']) await ts.admin.query(`drop trigger if exists ${t}`);
    await ts.admin.query('update audit_heads set seq = ?, hash = ? where tenant_id = ?', [seq, hash, tenant]);
  } else {
    await ts.admin.query('alter table audit_heads disable trigger user');
    try {
      await ts.admin.query('update audit_heads set seq = $1, hash = $2 where tenant_id = $3', [seq, hash, tenant]);
    } finally {
      await ts.admin.query('alter table audit_heads enable trigger user');
    }
  }
}

for (const b of await testStores()) {
  describe(`${b.backend}: the ledger head only moves forward`, { skip: b.skip }, () => {
    test('the app role cannot move a head back, sideways, past missing records, or delete it', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      const ledger = await LedgerService.open({
        store: ts.store,
        dataDir: ts.config.dataDir,
        threads: 0,
        checkpointIntervalMs: 0,
        env: {},
        intentRecovery: { intervalMs: 0 },
      });
      t.after(() => ledger.close());
      const recs = await Promise.all([1, 2, 3, 4, 5].map((i) => ledger.append(TENANT, draft(i))));
      const hash = (i: number) => Buffer.from(recs[i - 1]?.hash as string, 'hex');
      const refused = async (what: string, fn: (tx: Parameters<Parameters<typeof ts.store.withTenant>[1]>[0]) => Promise<unknown>) => {
        await assert.rejects(
          ts.store.withTenant(TENANT, fn),
          (err: Error) => /audit.?head|never deleted|permission denied/i.test(err.message),
          what,
        );
      };
      await refused('one seq back, with that record’s hash', (tx) =>
        tx
          .updateTable('audit_heads')
          .set({ seq: 4, hash: hash(4) })
          .where('tenant_id', '=', TENANT)
          .execute(),
      );
      await refused('same seq, another hash', (tx) =>
        tx
          .updateTable('audit_heads')
          .set({ hash: hash(4) })
          .where('tenant_id', '=', TENANT)
          .execute(),
      );
      await refused('forward past records that do not exist', (tx) =>
        tx
          .updateTable('audit_heads')
          .set({ seq: 9, hash: hash(5) })
          .where('tenant_id', '=', TENANT)
          .execute(),
      );
      await refused('deleted', (tx) => tx.deleteFrom('audit_heads').where('tenant_id', '=', TENANT).execute());
      const other = '01970c2e-4b1a-7c3d-8e4f-00000000abcd';
      await assert.rejects(
        ts.store.withTenant(other, (tx): Promise<unknown> =>
          ts.backend === 'sqlite'
            ? sql`insert into audit_heads (tenant_id, chain, seq, hash) values (${other}, 99, 3, ${hash(3)})`.execute(tx)
            : tx
                .insertInto('audit_heads')
                .values({ tenant_id: other, seq: 3, hash: hash(3) })
                .execute(),
        ),
        /audit.?head/i,
        'a head for a chain without records',
      );
      assert.deepEqual(await ts.store.withTenant(TENANT, (tx) => readHead(tx, TENANT)), { seq: 5, hash: recs[4]?.hash });
      // Appends still move it, one batch at a time.
      await Promise.all([6, 7, 8].map((i) => ledger.append(TENANT, draft(i))));
      assert.equal((await ts.store.withTenant(TENANT, (tx) => readHead(tx, TENANT)))?.seq, 8);
      const v = await ledger.verify(TENANT);
      assert.equal(v.chain.ok, true, JSON.stringify(v));
    });

    test(
      'a head moved back (or renamed) behind the ledger: appends fail without sealing on it, and a request changes nothing',
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
        const ledger = await LedgerService.open({
          store: ts.store,
          dataDir: ts.config.dataDir,
          threads: 0,
          checkpointIntervalMs: 0,
          env: {},
          intentRecovery: { intervalMs: 0 },
        });
        t.after(() => ledger.close());
        const recs = await Promise.all([1, 2, 3, 4, 5].map((i) => ledger.append(TENANT, draft(i))));
        const routes: AnyRoute[] = [
          route({
            stability: 'stable',
            summary: 's',
            permission: PUBLIC,
            setupExempt: true,
            audit: 'agent.create',
            method: 'POST',
            path: '/agents',
            operationId: 'create',
            handler: async (ctx) => {
              const id = uuid7();
              const now = nowTimestamp();
              await ts.store.withTenant(TENANT, (tx) =>
                tx
                  .insertInto('agents')
                  .values({
                    id,
                    tenant_id: TENANT,
                    name: 'a',
                    kind: 'agent',
                    external_id: '',
                    status: 'active',
                    version: 1,
                    created_at: now,
                    updated_at: now,
                  })
                  .execute(),
              );
              await ctx.audit({ kind: 'agent', id }, undefined, { chain: TENANT, as: { user: undefined } });
              return { id };
            },
          }),
        ];
        const app = new App({
          routes,
          services: { audit: ledger.sink } as unknown as Services,
          log,
          tls: true,
          bodyLimit: 1024,
          timeoutMs: 5000,
          aroundMutation: auditScopeAround(ledger, log),
        });
        const agents = async () => (await ts.store.withTenant(TENANT, (tx) => tx.selectFrom('agents').select('id').execute())).length;
        const intents = async () =>
          Number((await ts.store.transaction((tx) => sql<{ n: number }>`select count(*) as n from audit_intents`.execute(tx))).rows[0]?.n);
        assert.equal((await app.request('POST', '/agents')).status, 200);
        assert.equal(await agents(), 1);

        for (const [what, seq, hash] of [
          ['moved back one seq', 5, Buffer.from(recs[4]?.hash as string, 'hex')],
          ['renamed to another hash at its seq', 6, Buffer.alloc(32, 7)],
        ] as const) {
          await ownerSetsHead(ts, TENANT, seq, hash);
          await ledger.pipeline.flush();
          const before = await ts.store.withTenant(TENANT, (tx) => readRange(tx, TENANT, 1, 100));
          await assert.rejects(ledger.append(TENANT, draft(99)), /cannot be appended to/, `${what}: the append fails`);
          assert.equal(
            (await ts.store.withTenant(TENANT, (tx) => readRange(tx, TENANT, 1, 100))).length,
            before.length,
            `${what}: nothing sealed on the bad head`,
          );
          const res = await app.request('POST', '/agents');
          assert.ok(res.status >= 500, `${what}: ${res.status}`);
          assert.equal(await agents(), 1, `${what}: the change of a request whose record cannot be appended does not commit`);
          assert.equal(await intents(), 0, `${what}: no marker left, nothing to recover`);
          // Put the head back where it belongs; the chain goes on.
          await ownerSetsHead(ts, TENANT, 6, Buffer.from(before[5]?.hash as string, 'hex'));
        }
        assert.equal((await app.request('POST', '/agents')).status, 200);
        assert.equal(await agents(), 2);
        const v = await ledger.verify(TENANT);
        assert.equal(v.ok || v.checkpoints.status === 'pending', true, JSON.stringify(v));
        assert.equal(v.chain.ok, true, JSON.stringify(v));
      },
    );
  });
}
