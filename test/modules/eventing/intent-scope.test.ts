/**
 * Background work a request sets off is not that request's change (issue 48 item 13), on SQLite
 * and Postgres: the lanes a subscription's creation starts, and the dispatch its events wake, run
 * outside the request's audit intent scope. Before, every delivery row they wrote left a marker
 * under the request's scope, and the recovery recorded it as a change without its audit record.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newIntentScope, runInIntentScope } from '../../../src/ledger/audit-intent.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap } from '../../auth/harness.js';
import { createEventingHarness, startReceiver, waitFor, type EventingHarness } from './harness.js';

for (const b of await testStores()) {
  describe(`${b.backend}: background work outside the request's audit scope`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: EventingHarness;
    let root: { session: string; tenant: string };
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createEventingHarness(ts.store);
      root = await bootstrap(h);
      rx = await startReceiver(() => 200);
    });
    after(async () => {
      await rx?.close();
      await h?.dispose();
      await ts?.dispose();
    });

    const markers = async (scope: string) =>
      // The scope is a UUID we made: safe inline, and the same text for both backends.
      Number((await ts.admin.query<{ n: number | string }>(`select count(*) as n from audit_intents where scope = '${scope}'`))[0]?.n);

    it('the markers of a request do not grow after it answered', async () => {
      const request = (route: string) => newIntentScope({ requestId: `req-${route}`, route, actor: 'user:test', actorKind: 'user' });
      const subscribing = request('POST /v1/m/eventing/subscriptions');
      const created = await runInIntentScope(subscribing, () =>
        h.call('POST', '/v1/m/eventing/subscriptions', {
          token: root.session,
          tenant: root.tenant,
          body: { name: 'scoped', event_types: ['agent.created'], endpoint: rx.url('/scoped'), sink_format: 'json' },
        }),
      );
      assert.equal(created.status, 201, created.text);
      const ownSub = await markers(subscribing.id);
      const scopes = Array.from({ length: 5 }, (_, i) => request(`POST /v1/agents #${i}`));
      const own: number[] = [];
      for (const [i, s] of scopes.entries()) {
        const r = await runInIntentScope(s, () =>
          h.call('POST', '/v1/agents', { token: root.session, tenant: root.tenant, body: { name: `scoped-${i}` } }),
        );
        assert.equal(r.status, 201, r.text);
        own.push(await markers(s.id));
      }
      await waitFor(() => rx.delivered('/scoped').length >= 5, 15_000, 'the deliveries');
      // The outcomes are written after the answers: give them a moment, then count again.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await markers(subscribing.id), ownSub, 'the lanes wrote no marker under the subscription request');
      for (const [i, s] of scopes.entries()) assert.equal(await markers(s.id), own[i], `dispatch wrote no marker under request ${i}`);
    });
  });
}
