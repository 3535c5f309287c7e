/**
 * Two replicas under a burst of audited creates with nothing crashing (issue 48 item 13): every
 * change has its own audit record, so no replica may record a change as recovered
 * (`audit.recovered_after_failure`, the warning "a committed change had no audit record") and no
 * marker may be left in `audit_intents`. The burst runs with a webhook subscription live (its lanes
 * dispatch and claim while the requests commit) and, when SVC_TEST_NATS_URL is set, on the NATS bus.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pgQuery } from '../helpers/pg.js';
import type { TestServer } from '../helpers/server.js';
import { startReceiver, waitFor } from '../modules/eventing/harness.js';
import { assertVerifiesEverywhere, chain, deploy, replicaSkip, rest, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();
const NATS = process.env['SVC_TEST_NATS_URL'];
const WORKERS = 3;
const PER_WORKER = 25;

describe('two replicas under a burst of audited creates, no crash', { skip, timeout: 60_000 }, () => {
  let dep: Deployment;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let session: string;
  let tenant: string;
  before(async () => {
    rx = await startReceiver(() => 200);
    const bus: Record<string, string> = NATS ? { SERVICE_BUS: 'nats', SERVICE_NATS_URL: NATS } : {};
    dep = await deploy(2, { env: { ...bus, SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true' } });
    ({ session, tenant } = await setup(dep));
  });
  after(async () => {
    await dep?.stop();
    await rx?.close();
  });

  test('no change is recorded as recovered and no marker is left', async () => {
    const [a, b] = dep.replicas as [TestServer, TestServer];
    const sub = await rest(a, 'POST', '/v1/m/eventing/subscriptions', {
      token: session,
      tenant,
      body: { name: 'load', event_types: ['agent.created'], endpoint: rx.url('/load'), sink_format: 'json', timeout_ms: 2000 },
    });
    assert.equal(sub.status, 201, sub.text);
    let created = 0;
    const worker = async (server: TestServer, w: string) => {
      for (let i = 0; i < PER_WORKER; i++) {
        const r = await rest(server, 'POST', '/v1/agents', { token: session, tenant, body: { name: `${w}-${i}` } });
        assert.equal(r.status, 201, r.text);
        created++;
      }
    };
    await Promise.all([a, b].flatMap((s, si) => Array.from({ length: WORKERS }, (_, wi) => worker(s, `r${si}w${wi}`))));
    assert.equal(created, 2 * WORKERS * PER_WORKER);
    await waitFor(() => new Set(rx.delivered('/load').map((g) => g.id)).size >= created, 30_000, 'every create delivered');
    // Work the requests set off after they answered (deliveries, their outcomes) has settled by now.
    await new Promise((r) => setTimeout(r, 1500));
    const warned = dep.replicas.flatMap((r) => r.logs().filter((l) => /had no audit record/.test(String(l.msg))));
    const records = await chain(a, session, tenant);
    const recovered = records.filter((r) => r.action === 'audit.recovered_after_failure');
    const markers = await pgQuery<{ route: string; n: string }>(
      dep.dsn,
      'select route, count(*) as n from audit_intents group by route order by route',
    );
    assert.deepEqual(
      { warnings: warned.length, recovered: recovered.length, markers },
      { warnings: 0, recovered: 0, markers: [] },
      JSON.stringify(warned.slice(0, 3)),
    );
    assert.equal(records.filter((r) => r.action === 'agent.create').length, created);
    await assertVerifiesEverywhere(dep, session, tenant);
  });
});
