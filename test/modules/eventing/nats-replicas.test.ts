/**
 * The NATS JetStream binding with two real `svc serve` replicas on one fresh Postgres database and
 * the NATS server on loopback (SVC_TEST_NATS_URL, JetStream on): changes made on either replica
 * are delivered once per subscription, and after one replica is killed with kill -9 mid-stream the
 * other delivers everything that was acknowledged (duplicates only with the same webhook-id, checked
 * by the standardwebhooks package). Also: the bus settings are checked at startup (exit 2), an
 * unreachable NATS fails startup clearly, and /v1/console/bus reports the NATS binding.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { createTempDatabase, pgTestDsn } from '../../helpers/pg.js';
import { call, setupAndLogin, startServer, SVC_BIN, tempDir, type TestServer } from '../../helpers/server.js';
import { startReceiver, verify, waitFor } from './harness.js';

const NATS = process.env['SVC_TEST_NATS_URL'];
const pg = await pgTestDsn();
const skip = !NATS ? 'SVC_TEST_NATS_URL is not set (a NATS server with JetStream)' : pg.skip;
const ADMIN = { email: 'replicas@example.test', password: 'a long enough password' };

test('bad bus settings exit 2 naming the variable; an unreachable NATS fails startup clearly', { timeout: 120_000 }, () => {
  const dataDir = tempDir('svc-nats-config-');
  try {
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, [SVC_BIN, 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0'], {
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const bogus = run({ SERVICE_BUS: 'kafka' });
    assert.equal(bogus.status, 2, bogus.stderr);
    assert.match(bogus.stderr, /SERVICE_BUS must be "in-process" or "nats"/);
    const noUrl = run({ SERVICE_BUS: 'nats' });
    assert.equal(noUrl.status, 2, noUrl.stderr);
    assert.match(noUrl.stderr, /SERVICE_BUS=nats needs SERVICE_NATS_URL/);
    const badUrl = run({ SERVICE_BUS: 'nats', SERVICE_NATS_URL: 'http://127.0.0.1:4222' });
    assert.equal(badUrl.status, 2, badUrl.stderr);
    assert.match(badUrl.stderr, /SERVICE_NATS_URL/);
    const down = run({ SERVICE_BUS: 'nats', SERVICE_NATS_URL: 'nats://127.0.0.1:1' });
    assert.equal(down.status, 1, down.stderr);
    assert.match(down.stderr, /NATS at nats:\/\/127\.0\.0\.1:1 is unreachable/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test(
  'two replicas on one Postgres share the bus ' + 'and the deliveries; kill -9 of one loses nothing',
  { skip, timeout: 300_000 },
  async () => {
    const db = await createTempDatabase(pg.dsn as string);
    // One data directory for both replicas: the same TLS certificate, audit keys and sealing key
    // (the keyring is per data directory on main today; see the report).
    const dataDir = tempDir('svc-nats-replicas-');
    const rx = await startReceiver(() => ({ status: 200, delayMs: 20 }));
    const servers: TestServer[] = [];
    after(async () => {
      for (const s of servers) await s.stop('SIGKILL').catch(() => undefined);
      await rx.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const opts = {
      dataDir,
      timeoutMs: 90_000,
      args: ['--store', 'postgres', '--dsn', db.dsn],
      env: {
        SERVICE_BUS: 'nats',
        SERVICE_NATS_URL: NATS as string,
        SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true',
        SERVICE_RATE_LIMIT_RPS: '0',
      },
    };
    const a = await startServer(opts);
    servers.push(a);
    const { token, tenant } = await setupAndLogin(a, ADMIN);
    const b = await startServer(opts);
    servers.push(b);
    const json = { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-service-tenant': tenant };
    const bus = async (s: TestServer) =>
      (await call(s, 'GET', '/v1/console/bus', { headers: json })).json() as {
        binding: { kind: string; connected: boolean };
        lanes: Array<{ id: string; delivered: number }>;
      };
    assert.deepEqual((await bus(a)).binding, { kind: 'nats', connected: true });
    assert.deepEqual((await bus(b)).binding, { kind: 'nats', connected: true });

    const created = await call(a, 'POST', '/v1/m/eventing/subscriptions', {
      headers: json,
      body: JSON.stringify({
        name: 'replicas',
        event_types: ['agent.created'],
        endpoint: rx.url('/r'),
        sink_format: 'json',
        timeout_ms: 1000,
      }),
    });
    assert.equal(created.status, 201, created.text);
    const sub = created.json() as { id: string; secret: string };
    // Replica B loads the lane at its next reload (every 5 s).
    await waitFor(async () => (await bus(b)).lanes.some((l) => l.id === sub.id), 30_000, 'replica B runs the lane');

    const acked: string[] = [];
    const make = async (s: TestServer, i: number) => {
      const r = await call(s, 'POST', '/v1/agents', { headers: json, body: JSON.stringify({ name: `replica-${i}` }) });
      assert.equal(r.status, 201, r.text);
      acked.push((r.json() as { id: string }).id);
    };
    for (let i = 0; i < 60; i++) await make(i % 2 === 0 ? a : b, i);
    await waitFor(() => rx.got.length >= 10, 30_000, 'the first deliveries');
    const aDelivered = (await bus(a)).lanes.find((l) => l.id === sub.id)?.delivered ?? 0;
    assert.equal(await a.stop('SIGKILL'), null);
    // More changes after the kill, on the survivor.
    for (let i = 60; i < 80; i++) await make(b, i);

    const deliveredAgents = () =>
      new Set(rx.got.filter((g) => g.answered === 200).map((g) => (JSON.parse(g.body) as { data: { id: string } }).data.id));
    await waitFor(() => acked.every((id) => deliveredAgents().has(id)), 120_000, 'every acknowledged change delivered');
    const idsPerAgent = new Map<string, Set<string>>();
    for (const g of rx.got) {
      const payload = verify(sub.secret, g) as { id: string; data: { id: string } };
      assert.equal(payload.id, g.id);
      idsPerAgent.set(payload.data.id, (idsPerAgent.get(payload.data.id) ?? new Set()).add(g.id));
    }
    for (const [agent, ids] of idsPerAgent) assert.equal(ids.size, 1, `agent ${agent}: one webhook-id across duplicates`);
    assert.equal(idsPerAgent.size, acked.length, 'nothing but the acknowledged changes');
    // First attempts follow the sequence, across both replicas.
    const firsts = [...new Map(rx.got.map((g) => [g.id, Number((JSON.parse(g.body) as { sequence: string }).sequence)])).values()];
    assert.deepEqual(
      firsts,
      [...firsts].sort((x, y) => x - y),
    );
    const bDelivered = (await bus(b)).lanes.find((l) => l.id === sub.id)?.delivered ?? 0;
    assert.ok(bDelivered > 0, 'replica B delivered');
    // A's count is read before the kill and A goes on delivering until it dies: no sum of the two can be asserted.
    assert.ok(aDelivered > 0, `the replicas shared the work (A ${aDelivered} before the kill, B ${bDelivered})`);
    // The delivery rows agree: every one delivered, none stuck. An outcome is written after its
    // answer arrived (the finisher batches them), so the last rows may lag the receiver by a moment.
    type Rows = { items: Array<{ status: string }> };
    const rows = async () =>
      (await call(b, 'GET', `/v1/m/eventing/deliveries?subscription_id=${sub.id}&` + `limit=200`, { headers: json })).json() as Rows;
    await waitFor(async () => (await rows()).items.every((d) => d.status === 'delivered'), 30_000, 'every delivery row delivered');
    const final = await rows();
    assert.equal(final.items.length, acked.length);
    assert.ok(
      final.items.every((d) => d.status === 'delivered'),
      JSON.stringify(final.items.filter((d) => d.status !== 'delivered')),
    );
  },
);
