/**
 * kill -9 of a real `svc serve` with deliveries queued and in flight: after a restart on the same
 * data directory every acknowledged change is delivered, none is lost, and a delivery sent twice
 * (in flight at the kill) carries the same webhook-id both times. Also: a subscription whose stored
 * sink_format is exactly `otlp` delivers the OTLP envelope and the engine warns once for it.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { call, setupAndLogin, startServer, tempDir, type TestServer } from '../../helpers/server.js';
import { startReceiver, verify, waitFor } from './harness.js';

const ADMIN = { email: 'crash@example.test', password: 'a long enough password' };
const env = { SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true', SERVICE_RATE_LIMIT_RPS: '0' };

test('kill -9 with deliveries queued and in flight loses none; duplicates share their webhook-id', { timeout: 120_000 }, async () => {
  const dataDir = tempDir('svc-eventing-crash-');
  // Slow: each answer takes 100 ms, so most deliveries are still queued when the server is killed.
  const rx = await startReceiver();
  const slow = await startReceiverSlow(100);
  let server: TestServer | undefined;
  after(async () => {
    await server?.stop('SIGKILL');
    await rx.close();
    await slow.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  server = await startServer({ dataDir, env, timeoutMs: 60_000 });
  const { token, tenant } = await setupAndLogin(server, ADMIN);
  const json = { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-service-tenant': tenant };
  const mk = async (s: TestServer, body: unknown) => {
    const r = await call(s, 'POST', '/v1/m/eventing/subscriptions', { body: JSON.stringify(body), headers: json });
    assert.equal(r.status, 201, r.text);
    return r.json() as { id: string; secret: string };
  };
  // A short retry ladder: on a loaded machine an attempt can time out, and the default 30 s first
  // retry would outlast the wait below.
  const sub = await mk(server, {
    name: 'crash',
    event_types: ['agent.created'],
    endpoint: slow.url('/k'),
    sink_format: 'json',
    timeout_ms: 3000,
    retry: { initial_interval_s: 1 },
  });
  await mk(server, { name: 'otlp', event_types: ['agent.created'], endpoint: rx.url('/otlp'), sink_format: 'otlp' });
  const acked: string[] = [];
  for (let i = 0; i < 40; i++) {
    const r = await call(server, 'POST', '/v1/agents', { body: JSON.stringify({ name: `crash-${i}` }), headers: json });
    assert.equal(r.status, 201, r.text);
    acked.push(r.json().id);
  }
  await waitFor(() => slow.got.length >= 3, 10_000, 'the first deliveries');
  const beforeKill = slow.got.length;
  assert.equal(await server.stop('SIGKILL'), null);
  assert.ok(beforeKill < 40, `some deliveries were still queued at the kill (${beforeKill} sent)`);
  assert.equal(server.logs().filter((l) => /sink_format "otlp"/.test(l.msg)).length, 1, 'one warning for the otlp subscription');

  server = await startServer({ dataDir, env, timeoutMs: 60_000 });
  const delivered = () =>
    new Set(slow.got.filter((g) => g.answered === 200).map((g) => (JSON.parse(g.body) as { data: { id: string } }).data.id));
  await waitFor(() => acked.every((id) => delivered().has(id)), 60_000, 'every acknowledged agent delivered after the restart');
  const idsPerAgent = new Map<string, Set<string>>();
  for (const g of slow.got) {
    const payload = verify(sub.secret, g) as { id: string; data: { id: string } };
    assert.equal(payload.id, g.id);
    idsPerAgent.set(payload.data.id, (idsPerAgent.get(payload.data.id) ?? new Set()).add(g.id));
  }
  for (const [agent, ids] of idsPerAgent) assert.equal(ids.size, 1, `agent ${agent}: one webhook-id across duplicates`);
  // Order of first attempts follows the sequence.
  const firsts = [...new Map(slow.got.map((g) => [g.id, Number((JSON.parse(g.body) as { sequence: string }).sequence)])).values()];
  assert.deepEqual(firsts, [...firsts].sort((a, b) => a - b));
  // The otlp subscription got OTLP export-logs requests, not CloudEvents.
  await waitFor(() => rx.delivered('/otlp').length >= 40, 30_000, 'otlp deliveries');
  assert.ok('resourceLogs' in (JSON.parse(rx.delivered('/otlp')[0]!.body) as object));
});

/** A receiver that answers 200 after `ms`. */
async function startReceiverSlow(ms: number) {
  return startReceiver(() => ({ status: 200, delayMs: ms }));
}
