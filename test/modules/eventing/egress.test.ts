/**
 * Egress control over the API on SQLite and Postgres: GET /v1/m/eventing/egress-policy lists what
 * enforcing would block, the dry-run check explains a verdict, and in enforced mode creating or
 * updating a subscription to a host outside the allowlist is a 400 naming the rule while the delivery
 * engine fails deliveries to such a host without sending a byte (the receiver sees nothing).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap } from '../../auth/harness.js';
import { createEventingHarness, startReceiver, waitFor, type EventingHarness } from './harness.js';

const NOW = '2026-11-27T23:00:00.000000000Z';

for (const b of await testStores()) {
  describe(`${b.backend}: eventing egress control`, { skip: b.skip }, () => {
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
    const call = (method: string, path: string, body?: unknown) =>
      h.call(method, path, { token: root.session, tenant: root.tenant, ...(body !== undefined ? { body } : {}) });

    it('compatibility lists what enforcing would block; enforced refuses authoring and delivery; allowlisted passes', async () => {
      const created = await call('POST', '/v1/m/eventing/subscriptions', {
        name: 'a',
        event_types: ['agent.created'],
        sink_format: 'json',
        endpoint: rx.url('/a'),
      });
      assert.equal(created.status, 201, created.text);
      const sub = created.json() as { id: string; version: number };
      const authority = new URL(rx.url('/a')).host;

      const p0 = await call('GET', '/v1/m/eventing/egress-policy');
      assert.equal(p0.status, 200, p0.text);
      const policy0 = p0.json() as { mode: string; fence_armed: boolean; allow: string[]; would_block: { id: string; reason: string }[] };
      assert.equal(policy0.mode, 'compatibility');
      assert.deepEqual(policy0.allow, []);
      assert.deepEqual(policy0.would_block.map((w) => w.id), [sub.id]);
      assert.match(policy0.would_block[0]!.reason, /not in the egress allowlist/);
      const c0 = await call('POST', '/v1/m/eventing/egress-policy/check', { endpoint: rx.url('/a') });
      assert.equal(c0.status, 200, c0.text);
      assert.deepEqual(c0.json(), {
        endpoint: rx.url('/a'),
        mode: 'compatibility',
        allowed: false,
        enforced: false,
        reason: `host ${authority} is not in the egress allowlist`,
      });
      const bad = await call('POST', '/v1/m/eventing/egress-policy/check', { endpoint: rx.url('/a'), extra: 1 });
      assert.equal(bad.status, 400, 'unknown fields refused');

      // The operator enforces with an allowlist that does not name the receiver.
      await ts.admin.query(`update egress_settings set mode = 'enforced' where id = 1`);
      await ts.admin.query(`insert into egress_allowlist (host, created_at) values ('hooks.example.com', '${NOW}')`);
      const refused = await call('POST', '/v1/m/eventing/subscriptions', {
        name: 'b',
        event_types: ['agent.created'],
        sink_format: 'json',
        endpoint: rx.url('/b'),
      });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, /egress policy enforced: host .* is not in the egress allowlist/);
      const upd = await call('PUT', `/v1/m/eventing/subscriptions/${sub.id}`, {
        version: sub.version,
        name: 'a',
        event_types: ['agent.created'],
        sink_format: 'json',
        endpoint: rx.url('/a2'),
      });
      assert.equal(upd.status, 400, upd.text);
      assert.match(upd.text, /egress policy enforced/);
      const parked = await call('POST', '/v1/m/eventing/subscriptions', {
        name: 'parked',
        enabled: false,
        event_types: ['agent.created'],
        sink_format: 'json',
        endpoint: rx.url('/p'),
      });
      assert.equal(parked.status, 201, 'a disabled subscription sends nothing and is accepted');

      await new Promise((r) => setTimeout(r, 1100)); // the engine's policy cache (1 s)
      const agent = await call('POST', '/v1/agents', { name: 'egress-1' });
      assert.equal(agent.status, 201, agent.text);
      let failed: { status: string; last_error: string | null }[] = [];
      await waitFor(async () => {
        const d = await call('GET', `/v1/m/eventing/deliveries?subscription_id=${sub.id}&status=failed`);
        failed = (d.json() as { items: { status: string; last_error: string | null }[] }).items;
        return failed.length === 1;
      }, 15_000, 'the refused delivery');
      assert.match(String(failed[0]!.last_error), /egress policy enforced: host .* is not in the egress allowlist/);
      assert.equal(rx.delivered('/a').length, 0, 'nothing reached the receiver');

      // Allowlisting the receiver's host:port lets authoring and delivery through.
      await ts.admin.query(`insert into egress_allowlist (host, created_at) values ('${authority}', '${NOW}')`);
      const c1 = (await call('POST', '/v1/m/eventing/egress-policy/check', { endpoint: rx.url('/b') })).json() as {
        allowed: boolean;
        enforced: boolean;
      };
      assert.deepEqual([c1.allowed, c1.enforced], [true, true]);
      const ok = await call('POST', '/v1/m/eventing/subscriptions', {
        name: 'b',
        event_types: ['agent.created'],
        sink_format: 'json',
        endpoint: rx.url('/b'),
      });
      assert.equal(ok.status, 201, ok.text);
      const p1 = (await call('GET', '/v1/m/eventing/egress-policy')).json() as { mode: string; would_block: unknown[] };
      assert.equal(p1.mode, 'enforced');
      assert.deepEqual(p1.would_block, []);
      await new Promise((r) => setTimeout(r, 1100));
      await call('POST', '/v1/agents', { name: 'egress-2' });
      await waitFor(() => rx.delivered('/b').length === 1, 15_000, 'the allowed delivery');
    });

    it('an armed fence in compatibility mode: the API answers 400 naming the fence', async () => {
      await ts.admin.query(`update egress_settings set mode = 'compatibility', fence_armed = 1 where id = 1`);
      const res = await call('POST', '/v1/m/eventing/subscriptions', {
        name: 'fenced',
        event_types: ['agent.created'],
        sink_format: 'json',
        endpoint: 'http://127.0.0.2:1/x',
      });
      assert.equal(res.status, 400, res.text);
      assert.match(res.text, /egress fence: the database refuses/);
      await ts.admin.query(`update egress_settings set fence_armed = 0 where id = 1`);
    });

    it('needs a session: anonymous is 401', async () => {
      const res = await h.call('GET', '/v1/m/eventing/egress-policy', {});
      assert.equal(res.status, 401);
    });
  });
}
