/**
 * A dead replica's deliveries move on within seconds (issue 48 item 14, docs/scale-out.md): claims
 * are held under a short lease renewed by heartbeat while the replica works, so when the replica
 * holding a subscription's claim is killed with kill -9 in the middle of a backlog, the survivor
 * takes the lane over after at most one lease (4 s), not after a lease sized for the receiver's
 * timeout (20 s with the default 10 s timeout before), and every acknowledged change is delivered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestServer } from '../helpers/server.js';
import { startReceiver, waitFor } from '../modules/eventing/harness.js';
import { deploy, replicaSkip, rest, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();
const NATS = process.env['SVC_TEST_NATS_URL'];
const CREATES = 80;

describe('a dead replica’s claims move on', { skip, timeout: 60_000 }, () => {
  let dep: Deployment;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let session: string;
  let tenant: string;
  before(async () => {
    rx = await startReceiver(() => ({ status: 200, delayMs: 100 }));
    const bus: Record<string, string> = NATS ? { SERVICE_BUS: 'nats', SERVICE_NATS_URL: NATS } : {};
    dep = await deploy(2, { env: { ...bus, SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true' } });
    ({ session, tenant } = await setup(dep));
  });
  after(async () => {
    await dep?.stop();
    await rx?.close();
  });

  test('kill -9 of the replica delivering: the survivor goes on within 5 s, nothing lost', async () => {
    const [a, b] = dep.replicas as [TestServer, TestServer];
    // The default timeout (10 s): the old lease was sized from it (timeout + 5 s, + 5 s per batch).
    const sub = await rest(a, 'POST', '/v1/m/eventing/subscriptions', {
      token: session,
      tenant,
      body: { name: 'takeover', event_types: ['agent.created'], endpoint: rx.url('/t'), sink_format: 'json' },
    });
    assert.equal(sub.status, 201, sub.text);
    const subId = sub.json().id as string;
    type Lanes = { lanes: Array<{ id: string; in_flight: boolean }> };
    const lanes = async (s: TestServer) => ((await rest(s, 'GET', '/v1/console/bus', { token: session, tenant })).json() as Lanes).lanes;
    await waitFor(async () => (await lanes(b)).some((l) => l.id === subId), 30_000, 'both replicas run the lane');
    const agents: string[] = [];
    const worker = async (s: TestServer, w: number) => {
      for (let i = 0; i < CREATES / 4; i++) {
        const r = await rest(s, 'POST', '/v1/agents', { token: session, tenant, body: { name: `t-${w}-${i}` } });
        assert.equal(r.status, 201, r.text);
        agents.push(r.json().id);
      }
    };
    await Promise.all([worker(a, 0), worker(a, 1), worker(b, 2), worker(b, 3)]);
    await waitFor(() => rx.delivered('/t').length >= 5, 20_000, 'the first deliveries');
    // The replica with the lane's attempt in flight holds its claim: that one dies.
    let victim: TestServer | undefined;
    await waitFor(
      async () => {
        for (const s of [a, b]) if ((await lanes(s)).some((l) => l.id === subId && l.in_flight)) victim = s;
        return victim !== undefined;
      },
      10_000,
      'a replica delivering',
    );
    const survivor = victim === a ? b : a;
    await (victim as TestServer).stop('SIGKILL');
    const killedAt = Date.now();
    const before = rx.got.length;
    await waitFor(() => rx.got.length > before, 20_000, 'the survivor delivers');
    const gap = Date.now() - killedAt;
    assert.ok(gap < 6_000, `the survivor took over ${gap} ms after the kill`);
    const delivered = () => new Set(rx.delivered('/t').map((g) => (JSON.parse(g.body) as { data: { id: string } }).data.id));
    await waitFor(() => agents.every((id) => delivered().has(id)), 30_000, 'every acknowledged change delivered');
    assert.equal(delivered().size, CREATES);
    assert.ok((await lanes(survivor)).some((l) => l.id === subId));
  });
});
