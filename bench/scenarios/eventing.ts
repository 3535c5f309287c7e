/**
 * Scenario `eventing` (issue 38): signed webhook deliveries/s through the real delivery engine on
 * SQLite (synchronous=FULL), in-process bus: 100 subscriptions to loopback receivers, a backlog of
 * `SVC_BENCH_EVENTING_EVENTS` events (default 100, so 100 × 100 deliveries) written to the durable
 * log in one transaction each, then drained. Reports deliveries/s and event-to-receipt p50/p99
 * (under a backlog: queueing included, not the below-saturation figure the issue asks for).
 * Baseline in the same run: a bare node:http keep-alive client posting the same signed bodies to
 * the same receivers with the same concurrency (one in flight per subscription). The receivers run
 * in this process and share its CPU with the engine; the machine is shared: figures are noisy.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { EventBus } from '../../src/events/bus.js';
import { cloudEvent } from '../../src/events/event-log.js';
import { webhookHeaders } from '../../src/events/delivery/signature.js';
import { eventCatalog } from '../../src/routes.js';
import { EventingRuntime } from '../../src/modules/eventing/runtime.js';
import { createSubscription } from '../../src/modules/eventing/subscription-store.js';
import { Sealer } from '../../src/secrets/sealing.js';
import { newId } from '../../src/store/ids.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { openStore } from '../../src/store/store.js';
import type { BusEvent } from '../../src/events/event-types.js';
import type { BenchContext, Measurement, Scenario, ScenarioResult } from '../lib/types.js';

const SUBSCRIPTIONS = 100;

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}

async function receiver(onHit: (path: string, body: string) => void) {
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      onHit(req.url ?? '/', body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

export const scenario: Scenario = {
  name: 'eventing',
  description: 'signed webhook deliveries/s: 100 subscriptions, loopback receivers, SQLite; baseline a bare keep-alive client posting the same signed bodies',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';
    const events = Number(process.env['SVC_BENCH_EVENTING_EVENTS'] ?? 100);
    const store = await openStore({ backend: 'sqlite', dataDir: ctx.tmpDir }, pino({ level: 'silent' }));
    await store.migrate();
    const tenant = newId();
    await store.transaction((tx) => tx.insertInto('tenants').values({ id: tenant, name: 'bench', region: 'default', status: 'active', created_at: nowTimestamp(), deleted_at: null }).execute());
    const sealer = new Sealer(randomBytes(32));
    const bus = new EventBus({ catalog: eventCatalog() });
    const received = new Map<string, number>();
    const latencies: number[] = [];
    let hits = 0;
    const rx = await receiver((_p, body) => {
      hits++;
      const e = JSON.parse(body) as { time: string };
      latencies.push(Date.now() - Date.parse(e.time));
      received.set(_p, (received.get(_p) ?? 0) + 1);
    });
    const secrets: string[] = [];
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const { secret } = await store.withTenant(tenant, (tx) => createSubscription(tx, sealer, tenant, 'bench', { name: `s${i}`, event_types: ['agent.created'], endpoint: `http://127.0.0.1:${rx.port}/s${i}`, sink_format: 'json', role: 'owner' }));
      secrets.push(secret);
    }
    const rt = new EventingRuntime({ store, sealer, bus, log: pino({ level: 'warn' }), version: 'bench', pollMs: 1000 });
    ctx.log(`eventing: ${events} events × ${SUBSCRIPTIONS} subscriptions = ${events * SUBSCRIPTIONS} deliveries …`);
    const logged: BusEvent[] = [];
    for (let i = 0; i < events; i++) {
      await bus.withEvents((emit) => store.withTenant(tenant, (tx) => emit({ type: 'agent.created', tenant, subject: `agent/${newId()}`, data: { id: newId(), name: `a${i}` } }, tx) as Promise<void>));
    }
    const t0 = performance.now();
    await rt.start();
    const total = events * SUBSCRIPTIONS;
    const deadline = Date.now() + 110_000;
    while (hits < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const svcSeconds = (performance.now() - t0) / 1000;
    const svcHits = hits;
    await rt.close();
    latencies.sort((a, b) => a - b);
    const raw: Measurement[] = [{ target: 'svc-delivery-engine', path: `${SUBSCRIPTIONS} subscriptions`, requestsPerSec: Math.round(svcHits / svcSeconds), p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), detail: { deliveries: svcHits, expected: total, seconds: Number(svcSeconds.toFixed(2)) } }];

    // Baseline: the same signed bodies, posted by a bare client, one in flight per subscription.
    const rows = await store.withTenant(tenant, (tx) => tx.selectFrom('events').selectAll().where('tenant_id', '=', tenant).orderBy('seq').execute());
    for (const r of rows) logged.push({ tenant, id: r.id, type: r.type, source: r.source, subject: r.subject, time: r.time, data: JSON.parse(r.data) as Record<string, unknown>, sequence: Number(r.seq) });
    const bodies = logged.map((e) => JSON.stringify(cloudEvent(e)));
    const agent = new http.Agent({ keepAlive: true, maxSockets: SUBSCRIPTIONS });
    hits = 0;
    const post = (path: string, body: string, headers: Record<string, string>) =>
      new Promise<void>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: rx.port, path, method: 'POST', agent, headers: { ...headers, 'content-type': 'application/cloudevents+json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', reject);
        req.end(body);
      });
    const b0 = performance.now();
    await Promise.all(
      secrets.map(async (secret, i) => {
        for (let k = 0; k < bodies.length; k++) await post(`/s${i}`, bodies[k] as string, webhookHeaders([secret], logged[k]?.id as string, bodies[k] as string));
      }),
    );
    const baseSeconds = (performance.now() - b0) / 1000;
    agent.destroy();
    await rx.close();
    await store.close();
    const baseRate = Math.round(hits / baseSeconds);
    return {
      raw,
      baselines: [{ target: 'bare-node-http-client', path: `${SUBSCRIPTIONS} receivers`, requestsPerSec: baseRate, p50Ms: 0, p99Ms: 0, detail: { posts: hits, seconds: Number(baseSeconds.toFixed(2)) } }],
      ratios: [{ name: 'svc/bare-client', path: 'deliveries', requestsPerSec: Number(((raw[0]?.requestsPerSec ?? 0) / baseRate).toFixed(3)), p50: 0, p99: 0 }],
      subject: { store: 'sqlite', synchronous: 'full', subscriptions: SUBSCRIPTIONS, events, sink_format: 'json' },
      notes: [
        'A backlog drained: latency includes queueing (not the below-saturation p99 the issue asks for).',
        'Receivers run in the bench process and share its CPU; the machine is shared by other work: figures are noisy.',
        'The baseline uses node:http with keep-alive (undici is not used by the engine either).',
      ],
    };
  },
};
