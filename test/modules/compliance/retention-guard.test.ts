/**
 * Event-log retention under legal holds, on both stores, with the compliance module's real guards
 * (src/modules/compliance/hooks.ts) and the real purge (src/events/event-log.ts): the expired events
 * of a held subject stay, the expired events of every other subject go; a tenant-scope hold keeps the
 * whole tenant's log, and another tenant's expired events still go.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RecordHooks } from '../../../src/contract/record-hooks.js';
import { appendEvents, purgeExpired } from '../../../src/events/event-log.js';
import { nowTimestamp } from '../../../src/ledger/time.js';
import { complianceHooks } from '../../../src/modules/compliance/hooks.js';
import { newId } from '../../../src/store/ids.js';
import { testStores, type TestStore } from '../../helpers/stores.js';

const T1 = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e01';
const T2 = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e02';

for (const b of await testStores()) {
  describe(`${b.backend}: event-log retention skips held subjects`, { skip: b.skip }, () => {
    let ts: TestStore;
    const hooks = new RecordHooks(complianceHooks);
    const hold = async (tenant: string, scope: 'subject' | 'tenant', kind = '', ref = '') => {
      const now = nowTimestamp();
      const id = newId();
      await ts.store.withTenant(tenant, (tx) =>
        tx
          .insertInto('cmp_holds')
          .values({
            id,
            tenant_id: tenant,
            scope,
            subject_kind: kind,
            subject_ref: ref,
            data_class: '',
            matter: 'm',
            reason: 'r',
            title: '',
            on_behalf_of: '',
            status: 'active',
            placed_by: 'u',
            released_by: null,
            release_approval_id: null,
            released_at: null,
            created_at: now,
            updated_at: now,
          })
          .execute(),
      );
      return id;
    };
    const events = async (tenant: string, subjects: string[]) =>
      ts.store.withTenant(tenant, (tx) =>
        appendEvents(
          tx,
          subjects.map((subject) => ({
            tenant,
            id: newId(),
            type: 'agent.updated',
            source: '/svc/agents',
            subject,
            time: nowTimestamp(),
            data: {},
          })),
        ),
      );
    const subjectsLeft = async (tenant: string) =>
      (
        await ts.store.withTenant(tenant, (tx) =>
          tx.selectFrom('events').select('subject').where('tenant_id', '=', tenant).orderBy('seq').execute(),
        )
      ).map((r) => r.subject);

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      for (const id of [T1, T2])
        await ts.store.transaction((tx) =>
          tx
            .insertInto('tenants')
            .values({ id, name: 't', region: 'eu', status: 'active', created_at: nowTimestamp(), deleted_at: null })
            .execute(),
        );
    });
    after(async () => {
      await ts?.dispose();
    });

    it('keeps the expired events of a held subject and prunes the rest', async () => {
      await events(T1, ['agent/held', 'agent/free', 'agent/held', 'workspace/w1']);
      await hold(T1, 'subject', 'agent', 'held');
      // Everything is past a retention of 0 ms one second from now.
      const n = await purgeExpired(ts.store, 0, Date.now() + 1000, hooks);
      assert.equal(n, 2);
      assert.deepEqual(await subjectsLeft(T1), ['agent/held', 'agent/held']);
    });

    it('a tenant-scope hold keeps the whole tenant; another tenant is pruned', async () => {
      await events(T1, ['agent/x']);
      await events(T2, ['agent/y', 'agent/z']);
      await hold(T1, 'tenant');
      await purgeExpired(ts.store, 0, Date.now() + 1000, hooks);
      assert.deepEqual(await subjectsLeft(T1), ['agent/held', 'agent/held', 'agent/x']);
      assert.deepEqual(await subjectsLeft(T2), []);
    });
  });
}
