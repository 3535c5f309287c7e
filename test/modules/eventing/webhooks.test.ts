/**
 * Webhook subscriptions end to end on SQLite and Postgres: signed deliveries checked by the
 * `standardwebhooks` package on a loopback receiver, the durable event log (rolled-back changes
 * have no event), retries (500, 429 with Retry-After, a receiver that never answers), dead letters
 * and redelivery, 4xx → failed, order per subscription, the role ceiling, and tenant isolation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createOrg, userWithRole } from '../../auth/harness.js';
import { createEventingHarness, startReceiver, verify, waitFor, type EventingHarness } from './harness.js';

for (const b of await testStores()) {
  describe(`${b.backend}: eventing webhooks`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: EventingHarness;
    let root: { session: string; tenant: string };
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    let flakyAfter = 0;
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createEventingHarness(ts.store);
      root = await bootstrap(h);
      rx = await startReceiver((p, n) => {
        if (p === '/flaky') return n === 1 ? 500 : 200;
        if (p === '/busy') return n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : 200;
        if (p === '/hang') return 'hang';
        if (p === '/gone') return 410;
        if (p === '/down') return Date.now() < flakyAfter ? 503 : 200;
        if (p === '/slow') return { status: n === 3 ? 500 : 200, delayMs: 150 };
        return 200;
      });
    });
    after(async () => {
      await rx?.close();
      await h?.dispose();
      await ts?.dispose();
    });

    const subscribe = async (body: Record<string, unknown>, token = root.session, tenant = root.tenant) => {
      const res = await h.call('POST', '/v1/m/eventing/subscriptions', {
        token,
        tenant,
        body: { event_types: ['agent.created'], sink_format: 'json', ...body },
      });
      assert.equal(res.status, 201, res.text);
      return res.json() as { id: string; secret: string; version: number; cursor_seq: number };
    };
    const createAgent = async (name: string, extra: Record<string, unknown> = {}, token = root.session, tenant = root.tenant) =>
      h.call('POST', '/v1/agents', { token, tenant, body: { name, ...extra } });

    it('delivers signed CloudEvents that standardwebhooks accepts; forged, stale and altered ones it refuses', async () => {
      const sub = await subscribe({ name: 'ok', endpoint: rx.url('/ok') });
      assert.match(sub.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      const got = await h.call('GET', `/v1/m/eventing/subscriptions/${sub.id}`, { token: root.session });
      assert.equal(got.status, 200);
      assert.ok(!got.text.includes(sub.secret.slice(6)) && !('secret' in got.json()), 'the secret is never returned again');
      const agent = (await createAgent('signed-1')).json();
      await waitFor(() => rx.delivered('/ok').length === 1, 10_000, 'the delivery');
      const d = rx.delivered('/ok')[0]!;
      const payload = verify(sub.secret, d);
      assert.equal(payload['specversion'], '1.0');
      assert.equal(payload['type'], 'agent.created');
      assert.equal(payload['source'], '/svc/agents');
      assert.equal(payload['subject'], `agent/${agent.id}`);
      assert.equal(payload['tenantid'], root.tenant);
      assert.match(String(payload['sequence']), /^[1-9][0-9]*$/);
      assert.equal(payload['id'], d.id, 'webhook-id is the event id');
      assert.equal((payload['data'] as { id: string }).id, agent.id);
      const forged = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      assert.throws(() => verify(forged, d), 'another secret does not verify');
      assert.throws(() => verify(sub.secret, { ...d, body: d.body.replace('signed-1', 'signed-2') }), 'an altered body does not verify');
      const old = String(Math.floor(Date.now() / 1000) - 600);
      assert.throws(() => verify(sub.secret, { ...d, timestamp: old }), 'an old timestamp does not verify');
      // Delivered, on the deliveries list with its status.
      await waitFor(
        async () =>
          (await h.call('GET', `/v1/m/eventing/deliveries?subscription_id=${sub.id}&status=delivered`, { token: root.session })).json()
            .items.length === 1,
        5_000,
        'delivered status',
      );
    });

    it('the log has an event for every acknowledged change and none for a rolled-back one', async () => {
      assert.equal((await createAgent('dup', { external_id: 'ext-1' })).status, 201);
      const refused = await createAgent('dup-again', { external_id: 'ext-1' });
      assert.equal(refused.status, 409);
      const events = (await h.call('GET', '/v1/m/eventing/events?type=agent.created&limit=1000', { token: root.session })).json();
      const names = events.items.map((e: { data: { name: string } }) => e.data.name);
      assert.ok(names.includes('dup') && !names.includes('dup-again'), JSON.stringify(names));
      const seqs = events.items.map((e: { sequence: string }) => Number(e.sequence));
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
      assert.deepEqual(seqs, seqs.map((_: number, i: number) => seqs[0] + i), 'no gaps in the sequence');
      const all = (await h.call('GET', `/v1/m/eventing/events?after=${seqs[0]}`, { token: root.session })).json();
      assert.ok(all.items.every((e: { sequence: string }) => Number(e.sequence) > seqs[0]), 'the cursor');
    });

    it(
      'retries 500 and 429 (Retry-After), fails a 410 at once, and a receiver that never answers ends dead; redeliver requeues it',
      async () => {
        const flaky = await subscribe({ name: 'flaky', endpoint: rx.url('/flaky'), retry: { max_attempts: 3, initial_interval_s: 1 } });
        const busy = await subscribe({ name: 'busy', endpoint: rx.url('/busy'), retry: { max_attempts: 3, initial_interval_s: 1 } });
        const gone = await subscribe({ name: 'gone', endpoint: rx.url('/gone') });
        const hang = await subscribe({
          name: 'hang',
          endpoint: rx.url('/hang'),
          timeout_ms: 300,
          retry: { max_attempts: 2, initial_interval_s: 1 },
        });
        const t0 = Date.now();
        await createAgent('retry-me');
        await waitFor(() => rx.delivered('/flaky').length === 1 && rx.delivered('/busy').length === 1, 15_000, 'retried deliveries');
        const busyTimes = rx.got.filter((g) => g.path === '/busy');
        assert.equal(busyTimes.length, 2);
        assert.equal(busyTimes[0]!.id, busyTimes[1]!.id, 'a retry carries the same webhook-id');
        const list = async (id: string) =>
          (await h.call('GET', `/v1/m/eventing/deliveries?subscription_id=${id}`, { token: root.session })).json().items;
        await waitFor(async () => (await list(flaky.id))[0]?.status === 'delivered', 5_000, 'flaky delivered');
        assert.equal((await list(flaky.id))[0].attempts, 2);
        await waitFor(async () => (await list(gone.id))[0]?.status === 'failed', 5_000, 'gone failed');
        const g = (await list(gone.id))[0];
        assert.equal(g.attempts, 1, '410 is not retried');
        assert.equal(g.last_status, 410);
        await waitFor(async () => (await list(hang.id))[0]?.status === 'dead', 15_000, 'hang dead');
        assert.ok(Date.now() - t0 >= 900, 'the ladder waited');
        const dead = (await h.call('GET', `/v1/m/eventing/dead-letters?subscription_id=${hang.id}`, { token: root.session })).json().items;
        assert.equal(dead.length, 1);
        assert.match(dead[0].last_error, /no answer within 300 ms/);
        // The receiver is fixed: point the subscription elsewhere (PUT keeps the secret), redeliver.
        const cur = (await h.call('GET', `/v1/m/eventing/subscriptions/${hang.id}`, { token: root.session })).json();
        const put = await h.call('PUT', `/v1/m/eventing/subscriptions/${hang.id}`, {
          token: root.session,
          body: { name: 'hang', event_types: ['agent.created'], sink_format: 'json', endpoint: rx.url('/fixed'), version: cur.version },
        });
        assert.equal(put.status, 200, put.text);
        assert.ok(!('secret' in put.json()));
        const again = await h.call('POST', `/v1/m/eventing/dead-letters/${dead[0].id}/redeliver`, { token: root.session });
        assert.equal(again.status, 200, again.text);
        await waitFor(() => rx.delivered('/fixed').length === 1, 10_000, 'redelivered');
        verify(hang.secret, rx.delivered('/fixed')[0]!);
        assert.equal(
          (await h.call('POST', `/v1/m/eventing/dead-letters/${dead[0].id}/redeliver`, { token: root.session })).status,
          409,
          'only a dead delivery',
        );
        for (const s of [flaky, busy, gone, hang])
          assert.equal((await h.call('DELETE', `/v1/m/eventing/subscriptions/${s.id}`, { token: root.session })).status, 204);
      },
    );

    it('a receiver that is down then up gets every event once, in sequence order; another subscription is not held up', async () => {
      flakyAfter = Date.now() + 2_500;
      const down = await subscribe({ name: 'down', endpoint: rx.url('/down'), retry: { max_attempts: 10, initial_interval_s: 1 } });
      const fast = await subscribe({ name: 'fast', endpoint: rx.url('/fast') });
      const names = Array.from({ length: 5 }, (_, i) => `order-${i}`);
      for (const n of names) assert.equal((await createAgent(n)).status, 201);
      await waitFor(() => rx.delivered('/fast').length === 5, 5_000, 'the healthy subscription');
      assert.ok(rx.delivered('/down').length === 0, 'the down receiver has had nothing yet');
      await waitFor(() => rx.delivered('/down').length === 5, 20_000, 'the backlog after the receiver came up');
      const seen = rx.delivered('/down').map((d) => verify(down.secret, d));
      assert.deepEqual(seen.map((p) => (p['data'] as { name: string }).name), names, 'in order, once each');
      assert.equal(new Set(seen.map((p) => p['id'])).size, 5);
      for (const s of [down, fast]) await h.call('DELETE', `/v1/m/eventing/subscriptions/${s.id}`, { token: root.session });
    });

    it('events arriving while the lane is busy: first attempts in sequence order; a retry gives back what is behind it', async () => {
      const slow = await subscribe({ name: 'slow', endpoint: rx.url('/slow'), retry: { max_attempts: 5, initial_interval_s: 1 } });
      const names = Array.from({ length: 8 }, (_, i) => `busy-${i}`);
      // One event per transaction while the receiver takes 150 ms per request: new rows reach a lane that is attempting.
      for (const n of names) assert.equal((await createAgent(n)).status, 201);
      await waitFor(() => rx.delivered('/slow').length === 8, 20_000, 'every event delivered');
      const first: string[] = [];
      for (const g of rx.got.filter((x) => x.path === '/slow')) {
        const name = (verify(slow.secret, g)['data'] as { name: string }).name;
        if (!first.includes(name)) first.push(name);
      }
      assert.deepEqual(first, names, 'first attempts follow the event sequence');
      const delivered = rx.delivered('/slow').map((g) => (verify(slow.secret, g)['data'] as { name: string }).name);
      assert.deepEqual(delivered, names, 'delivered in order, once each');
      let rows: Array<{ status: string; attempts: number }> = [];
      await waitFor(async () => {
        rows = (await h.call('GET', `/v1/m/eventing/deliveries?subscription_id=${slow.id}`, { token: root.session })).json().items;
        return rows.length === 8 && rows.every((d) => d.status === 'delivered');
      }, 10_000, 'every delivery row delivered');
      // Only the delivery answered 500 was attempted twice; what was given back is not counted as attempted.
      assert.deepEqual(rows.map((d) => d.attempts).sort(), [1, 1, 1, 1, 1, 1, 1, 2]);
      await h.call('DELETE', `/v1/m/eventing/subscriptions/${slow.id}`, { token: root.session });
    });

    it("a subscription's role ceiling: a viewer-role subscription never receives edge.observed; a viewer cannot subscribe", async () => {
      const viewer = await userWithRole(h, root.session, root.tenant, `viewer-${b.backend}@example.test`, 'viewer');
      const refused = await h.call('POST', '/v1/m/eventing/subscriptions', {
        token: viewer.session,
        body: { name: 'v', event_types: ['agent.created'], endpoint: rx.url('/v') },
      });
      assert.equal(refused.status, 403);
      const low = await subscribe({
        name: 'low',
        role: 'viewer',
        endpoint: rx.url('/low'),
        event_types: ['edge.observed', 'agent.created'],
      });
      const high = await subscribe({
        name: 'high',
        role: 'editor',
        endpoint: rx.url('/high'),
        event_types: ['edge.observed', 'agent.created'],
      });
      await h.bus.withEvents((emit) =>
        h.store.withTenant(
          root.tenant,
          (tx) =>
            emit({ type: 'edge.observed', tenant: root.tenant, subject: `tenant/${root.tenant}`, data: { count: 1 } }, tx) as Promise<void>,
        ),
      );
      await createAgent('after-edge');
      await waitFor(() => rx.delivered('/high').length === 2 && rx.delivered('/low').length === 1, 10_000, 'role-filtered deliveries');
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(rx.delivered('/low').map((d) => verify(low.secret, d)['type']), ['agent.created']);
      assert.deepEqual(rx.delivered('/high').map((d) => verify(high.secret, d)['type']), ['edge.observed', 'agent.created']);
      const viewerEvents = (await h.call('GET', '/v1/m/eventing/events?limit=1000', { token: viewer.session })).json().items;
      assert.ok(
        viewerEvents.length > 0 && viewerEvents.every((e: { type: string }) => e.type !== 'edge.observed'),
        'the events list is filtered by role too',
      );
      const above = await h.call('POST', '/v1/m/eventing/subscriptions', {
        token: (await userWithRole(h, root.session, root.tenant, `editor-${b.backend}@example.test`, 'editor')).session,
        body: { name: 'x', role: 'admin', event_types: ['agent.created'], endpoint: rx.url('/x') },
      });
      assert.equal(above.status, 403);
      assert.equal(above.json().error.code, 'role_ceiling');
      for (const s of [low, high]) await h.call('DELETE', `/v1/m/eventing/subscriptions/${s.id}`, { token: root.session });
    });

    it('tenant B never sees A’s subscriptions, events or deliveries', async () => {
      const tenantB = await createOrg(h, root.session, `B ${b.backend}`);
      const bOwner = await userWithRole(h, root.session, tenantB, `b-${b.backend}@example.test`, 'owner');
      const aSub = await subscribe({ name: 'a-only', endpoint: rx.url('/a-only') });
      await createAgent('a-secret-agent');
      await waitFor(() => rx.delivered('/a-only').length === 1, 10_000, "A's delivery");
      assert.equal((await h.call('GET', `/v1/m/eventing/subscriptions/${aSub.id}`, { token: bOwner.session })).status, 404);
      assert.deepEqual((await h.call('GET', '/v1/m/eventing/subscriptions', { token: bOwner.session })).json().items, []);
      type Logged = { sequence: string; type: string; tenantid: string };
      const bLog = async (): Promise<string[][]> =>
        ((await h.call('GET', '/v1/m/eventing/events', { token: bOwner.session })).json().items as Logged[]).map((e) => [
          e.sequence,
          e.type,
          e.tenantid,
        ]);
      // B's log holds B's own events only: its owner's creation, none of A's.
      assert.deepEqual(await bLog(), [['1', 'user.created', tenantB]]);
      assert.deepEqual((await h.call('GET', '/v1/m/eventing/deliveries', { token: bOwner.session })).json().items, []);
      assert.equal((await h.call('DELETE', `/v1/m/eventing/subscriptions/${aSub.id}`, { token: bOwner.session })).status, 404);
      assert.equal((await h.call('POST', `/v1/m/eventing/subscriptions/${aSub.id}/rotate-secret`, { token: bOwner.session })).status, 404);
      // B's sequence is B's own: its next event is 2, whatever A's log holds.
      await createAgent('b-agent', {}, bOwner.session, tenantB);
      assert.deepEqual(await bLog(), [
        ['1', 'user.created', tenantB],
        ['2', 'agent.created', tenantB],
      ]);
      await h.call('DELETE', `/v1/m/eventing/subscriptions/${aSub.id}`, { token: root.session });
    });

    it('rotate-secret: both secrets verify during the grace window; test sends a real signed delivery', async () => {
      const sub = await subscribe({ name: 'rotating', endpoint: rx.url('/rot') });
      const rot = await h.call('POST', `/v1/m/eventing/subscriptions/${sub.id}/rotate-secret`, { token: root.session });
      assert.equal(rot.status, 200, rot.text);
      const next = rot.json();
      assert.notEqual(next.secret, sub.secret);
      assert.ok(next.previous_secret_expires_at);
      const t = await h.call('POST', `/v1/m/eventing/subscriptions/${sub.id}/test`, { token: root.session });
      assert.equal(t.status, 200, t.text);
      assert.equal(t.json().delivery.status, 'delivered');
      const d = rx.delivered('/rot')[0]!;
      assert.equal(d.signature.split(' ').length, 2);
      assert.equal(verify(next.secret, d)['type'], 'subscription.tested');
      verify(sub.secret, d);
      await h.call('DELETE', `/v1/m/eventing/subscriptions/${sub.id}`, { token: root.session });
    });

    it('GET /v1/console/bus (superadmin): binding, subscribers per type, lanes with queue depths; others 403', async () => {
      const sub = await subscribe({ name: 'console', endpoint: rx.url('/console') });
      const res = await h.call('GET', '/v1/console/bus', { token: root.session });
      assert.equal(res.status, 200, res.text);
      const bus = res.json();
      assert.deepEqual(bus.binding, { kind: 'in-process', connected: true });
      assert.ok(bus.types.find((t: { type: string }) => t.type === 'agent.created').subscribers.includes('eventing'));
      assert.equal(typeof bus.drops, 'number');
      const lane = bus.lanes.find((l: { id: string }) => l.id === sub.id);
      assert.ok(lane && typeof lane.queued === 'number', JSON.stringify(bus.lanes));
      const editor = await userWithRole(h, root.session, root.tenant, `console-${b.backend}@example.test`, 'owner');
      assert.equal((await h.call('GET', '/v1/console/bus', { token: editor.session })).status, 403);
      await h.call('DELETE', `/v1/m/eventing/subscriptions/${sub.id}`, { token: root.session });
    });

    it(
      'authoring refuses a bad sink_format naming the accepted tokens, a plain-HTTP endpoint without the development flag, and bad ' +
        'input',
      async () => {
        const bad = await h.call('POST', '/v1/m/eventing/subscriptions', {
          token: root.session,
          body: { name: 'f', event_types: ['agent.created'], endpoint: rx.url('/f'), sink_format: 'xml' },
        });
        assert.equal(bad.status, 400);
        assert.match(bad.json().error.message, /ocsf, cef, leef, syslog, otlp, otlp_envelope, json/);
        process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = '';
        try {
          for (const endpoint of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://localhost:9/x']) {
            const r = await h.call('POST', '/v1/m/eventing/subscriptions', {
              token: root.session,
              body: { name: 'e', event_types: ['agent.created'], endpoint },
            });
            assert.equal(r.status, 400, endpoint);
            assert.match(r.json().error.message, /SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS/);
          }
        } finally {
          process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';
        }
        const cases: unknown[] = [
          { name: 'u', event_types: ['agent.created'], endpoint: rx.url('/u'), surprise: 1 },
          { name: 'u', event_types: ['no.such_type'], endpoint: rx.url('/u') },
          { name: 'u\u0000', event_types: ['agent.created'], endpoint: rx.url('/u') },
          { name: 'u', event_types: 'agent.created', endpoint: rx.url('/u') },
          { name: 'u', event_types: ['agent.created'], endpoint: 'not a url' },
        ];
        for (const body of cases) {
          const r = await h.call('POST', '/v1/m/eventing/subscriptions', { token: root.session, body });
          assert.equal(r.status, 400, JSON.stringify(body));
          assert.equal(r.json().error.code, 'bad_request');
        }
        const malformed = await h.call('POST', '/v1/m/eventing/subscriptions', {
          token: root.session,
          body: '{"name":',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(malformed.status, 400);
      },
    );

    it('every mutation appends an audit record; receiver credentials are sealed, never returned', async () => {
      const sub = await subscribe({
        name: 'authd',
        endpoint: rx.url('/authd'),
        auth: { kind: 'bearer', token: 'receiver-bearer-token-123' },
      });
      const got = (await h.call('GET', `/v1/m/eventing/subscriptions/${sub.id}`, { token: root.session })).text;
      assert.ok(!got.includes('receiver-bearer-token-123'));
      assert.match(got, /"hint":"-123"/);
      const stored = await h.store.withTenant(root.tenant, (tx) =>
        tx.selectFrom('event_subscriptions').select(['auth_sealed', 'secret_sealed']).where('id', '=', sub.id).executeTakeFirstOrThrow(),
      );
      assert.ok(!String(stored.auth_sealed).includes('receiver-bearer') && String(stored.auth_sealed).startsWith('sv1:'));
      assert.ok(!String(stored.secret_sealed).includes(sub.secret.slice(6)));
      await createAgent('authd-agent');
      await waitFor(() => rx.delivered('/authd').length === 1, 10_000, 'authd delivery');
      assert.equal(rx.delivered('/authd')[0]!.headers['authorization'], 'Bearer receiver-bearer-token-123');
      await h.call('DELETE', `/v1/m/eventing/subscriptions/${sub.id}`, { token: root.session });
      const actions = h.audit.appended.map((a) => a.draft.action);
      for (const a of [
        'eventing.subscription.create',
        'eventing.subscription.update',
        'eventing.subscription.delete',
        'eventing.subscription.rotate_secret',
        'eventing.subscription.test',
        'eventing.delivery.redeliver',
      ])
        assert.ok(actions.includes(a), a);
    });
  });
}
