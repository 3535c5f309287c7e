/**
 * The measuring core of `svc bench eventing` and of `npm run bench -- eventing` (both call
 * `runEventing`; issues 36 and 38): signed webhook deliveries through the real delivery engine on
 * SQLite (synchronous=FULL), in-process bus, 100 subscriptions to loopback receivers that run in a
 * child process (src/bench/eventing-receiver.ts), so the CPU this process spends is the sender's.
 *
 * 1. Throughput, ABBA: A = svc drains a burst of `events` events (× 100 subscriptions) written to
 *    the durable log in transactions of 50 while the engine runs; B = the baseline, a bare undici
 *    client posting the same signed bodies (signed per request, as the engine does) to the same
 *    receivers, one in flight per subscription. Order A B B A; each figure is the mean of its two
 *    runs. Also CPU ms of this process per 1,000 deliveries.
 * 2. Latency below saturation: events published one per transaction at a steady rate of half the
 *    measured svc throughput for `pacedSeconds`: event-to-receipt p50/p99 (receipt time minus the
 *    envelope's `time`, stamped before the commit).
 * 3. Backlog: the engine stopped, `backlog` deliveries queued in the store, then a new engine
 *    drains them: deliveries/s and peak RSS above the idle RSS measured just before (sampled every
 *    250 ms).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Agent } from 'undici';
import { EventBus } from '../events/bus.js';
import { cloudEvent, eventFromRow, EVENT_COLUMNS, lastSeq } from '../events/event-log.js';
import { queueMany } from '../events/delivery/delivery-store.js';
import { webhookHeaders } from '../events/delivery/signature.js';
import type { BusEvent } from '../events/event-types.js';
import { eventCatalog } from '../routes.js';
import { EventingRuntime } from '../modules/eventing/runtime.js';
import { createSubscription } from '../modules/eventing/subscription-store.js';
import { Sealer } from '../secrets/sealing.js';
import { newId } from '../store/ids.js';
import { nowTimestamp } from '../ledger/time.js';
import { openStore, type Store } from '../store/store.js';
import { sqliteCacheMibFromEnv } from '../store/sqlite/sqlite-cache.js';
import { limitHeapGrowth } from '../serve/heap-growth.js';

const SUBSCRIPTIONS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}

class Receivers {
  #pending: Array<(m: Record<string, unknown>) => void> = [];
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.on('message', (m: Record<string, unknown>) => this.#pending.shift()?.(m));
  }
  static async start(onChild: (c: ChildProcess) => void = () => undefined): Promise<Receivers> {
    const child = fork(fileURLToPath(new URL('./eventing-receiver.js', import.meta.url)), [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    onChild(child);
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { port: number }) => resolve(m.port));
      child.once('exit', () => reject(new Error('the receiver process exited')));
    });
    return new Receivers(child, port);
  }
  ask(m: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      this.#pending.push(resolve);
      this.child.send(m);
    });
  }
  async hits(): Promise<number> {
    return Number((await this.ask({ cmd: 'hits' }))['hits']);
  }
  async waitFor(n: number, ms: number): Promise<number> {
    const end = Date.now() + ms;
    let h = 0;
    while ((h = await this.hits()) < n && Date.now() < end) await sleep(25);
    return h;
  }
}

interface Rig {
  store: Store;
  tenant: string;
  bus: EventBus;
  sealer: Sealer;
  secrets: string[];
  rx: Receivers;
}

/** Writes `n` agent.created events in transactions of `per`; returns them as logged. */
async function publish(rig: Rig, n: number, per: number): Promise<void> {
  for (let i = 0; i < n; i += per) {
    await rig.bus.withEvents((emit) =>
      rig.store.withTenant(rig.tenant, async (tx) => {
        for (let k = i; k < Math.min(n, i + per); k++)
          await emit(
            {
              type: 'agent.created',
              tenant: rig.tenant,
              subject: `agent/${newId()}`,
              data: { id: newId(), name: `a${k}`, kind: 'agent', external_id: '', status: 'active' },
            },
            tx,
          );
      }),
    );
  }
}

async function lastEvents(rig: Rig, n: number): Promise<BusEvent[]> {
  const rows = await rig.store.withTenant(rig.tenant, (tx) =>
    tx.selectFrom('events').select(EVENT_COLUMNS).where('tenant_id', '=', rig.tenant).orderBy('seq', 'desc').limit(n).execute(),
  );
  return rows.map(eventFromRow).reverse();
}

/** A: svc drains a burst of `events` × 100 deliveries; rate and CPU ms per 1,000. */
async function svcBurst(rig: Rig, events: number): Promise<BurstRun> {
  await rig.rx.ask({ cmd: 'reset' });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await publish(rig, events, 50);
  const total = events * SUBSCRIPTIONS;
  const n = await rig.rx.waitFor(total, 600_000);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (n < total) throw new Error(`svc delivered ${n} of ${total} in ${seconds.toFixed(0)} s`);
  return { rate: n / seconds, cpuPer1k: (cpu.user + cpu.system) / 1000 / (n / 1000), seconds, n };
}

/** B: a bare undici client posting the same bodies, signed per request, one in flight per subscription. */
async function bareBurst(rig: Rig, events: BusEvent[]): Promise<BurstRun> {
  const bodies = events.map((e) => JSON.stringify(cloudEvent(e)));
  const agent = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
  await rig.rx.ask({ cmd: 'reset' });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    rig.secrets.map(async (secret, i) => {
      for (let k = 0; k < bodies.length; k++) {
        const body = bodies[k] as string;
        const res = await agent.request({
          origin: `http://127.0.0.1:${rig.rx.port}`,
          path: `/s${i}`,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/cloudevents+json', ...webhookHeaders([secret], (events[k] as BusEvent).id, body) },
        });
        await res.body.dump();
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await agent.close();
  const n = await rig.rx.hits();
  return { rate: n / seconds, cpuPer1k: (cpu.user + cpu.system) / 1000 / (n / 1000), seconds, n };
}

/** Latency below saturation: `rate` events/s, one per transaction, for `seconds`. */
async function paced(rig: Rig, rate: number, seconds: number): Promise<PacedResult> {
  await rig.rx.ask({ cmd: 'reset', latency: true });
  const total = Math.max(1, Math.round(rate * seconds));
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    await publish(rig, 1, 1);
  }
  await rig.rx.waitFor(total * SUBSCRIPTIONS, 120_000);
  const stats = (await rig.rx.ask({ cmd: 'stats' })) as { hits: number; latencies: number[] };
  const lat = stats.latencies.sort((a, b) => a - b);
  return {
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
    max: lat[lat.length - 1] ?? 0,
    n: stats.hits,
    deliveriesPerSec: stats.hits / ((performance.now() - t0) / 1000),
  };
}

/** Queues `deliveries` (events × 100) in the store with no engine running, then drains them with a new one, sampling RSS. */
async function backlog(
  rig: Rig,
  deliveries: number,
  start: () => Promise<EventingRuntime>,
  log: (m: string) => void,
): Promise<BacklogResult> {
  const events = Math.ceil(deliveries / SUBSCRIPTIONS);
  const lanes = (
    await rig.store.withTenant(rig.tenant, (tx) =>
      tx.selectFrom('event_subscriptions').select('id').where('tenant_id', '=', rig.tenant).execute(),
    )
  ).map((r) => r.id);
  const q0 = performance.now();
  for (let i = 0; i < events; i += 200) {
    const n = Math.min(200, events - i);
    await rig.store.withTenant(rig.tenant, async (tx) => {
      const logged = await rig.bus.record(
        tx,
        Array.from({ length: n }, (_, k) => ({
          type: 'agent.created',
          tenant: rig.tenant,
          subject: `agent/${newId()}`,
          data: { id: newId(), name: `b${i + k}`, kind: 'agent', external_id: '', status: 'active' },
        })),
      );
      await queueMany(tx, rig.tenant, lanes.flatMap((laneId) => logged.map((event) => ({ laneId, event }))));
      await tx
        .updateTable('event_subscriptions')
        .set({ cursor_seq: await lastSeq(tx, rig.tenant) })
        .where('tenant_id', '=', rig.tenant)
        .execute();
    });
    if (i % 2000 === 0) log(`backlog: ${(i + n) * SUBSCRIPTIONS} deliveries queued …`);
  }
  const queueSeconds = (performance.now() - q0) / 1000;
  await rig.rx.ask({ cmd: 'reset' });
  await sleep(1000);
  const idleMem = process.memoryUsage();
  const idle = idleMem.rss;
  let peak = idle;
  let peakHeap = idleMem.heapTotal;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    peakHeap = Math.max(peakHeap, m.heapTotal);
  }, 250);
  const t0 = performance.now();
  const rt = await start();
  const total = events * SUBSCRIPTIONS;
  let n = 0;
  let lastLog = Date.now();
  while ((n = await rig.rx.hits()) < total && performance.now() - t0 < 3_600_000) {
    if (Date.now() - lastLog > 10_000) {
      log(`backlog: ${n} of ${total} delivered, RSS +${((peak - idle) / 2 ** 20).toFixed(0)} MiB peak`);
      lastLog = Date.now();
    }
    await sleep(100);
  }
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  await rt.close();
  return {
    total,
    delivered: n,
    seconds,
    rate: n / seconds,
    idleMiB: idle / 2 ** 20,
    peakAboveIdleMiB: (peak - idle) / 2 ** 20,
    // V8's heap alone: the rest of the RSS growth is native (SQLite's page cache, statements, buffers).
    heapIdleMiB: idleMem.heapTotal / 2 ** 20,
    heapPeakAboveIdleMiB: (peakHeap - idleMem.heapTotal) / 2 ** 20,
    queueSeconds,
  };
}

export type BurstRun = {
  /** deliveries/s */
  rate: number;
  /** CPU ms of this process per 1,000 deliveries */
  cpuPer1k: number;
  seconds: number;
  n: number;
};

export type PacedResult = {
  p50: number;
  p99: number;
  max: number;
  /** deliveries received */
  n: number;
  deliveriesPerSec: number;
};

export type BacklogResult = {
  total: number;
  delivered: number;
  seconds: number;
  rate: number;
  idleMiB: number;
  peakAboveIdleMiB: number;
  heapIdleMiB: number;
  heapPeakAboveIdleMiB: number;
  queueSeconds: number;
};

export interface EventingOptions {
  /** scratch directory: the SQLite store */
  dataDir: string;
  /** events per burst of the ABBA throughput runs (× 100 subscriptions) */
  events: number;
  /** seconds of the paced latency run */
  pacedSeconds: number;
  /** deliveries queued with no engine running, then drained; 0 skips the backlog */
  backlog: number;
  /** events of the unrecorded warm-up burst (JIT, connection pools); 0 skips it */
  warmupEvents: number;
  log(m: string): void;
  /** sees the receiver child process as soon as it is forked (the harness tracks it) */
  onChild?(c: ChildProcess): void;
}

export interface EventingResult {
  subscriptions: number;
  events: number;
  /** A B B A: svc runs (A) and bare undici runs (B) */
  svc: BurstRun[];
  bare: BurstRun[];
  /** mean of the two runs, deliveries/s */
  svcRate: number;
  bareRate: number;
  svcCpuPer1k: number;
  bareCpuPer1k: number;
  /** svcRate / bareRate */
  ratio: number;
  /** svcCpuPer1k / bareCpuPer1k (>1: svc costlier) */
  cpuRatio: number;
  /** paced run: events/s (× subscriptions deliveries/s) */
  pacedEventsPerSec: number;
  pacedSeconds: number;
  paced: PacedResult;
  backlog?: BacklogResult;
  heapGrowth: boolean;
  sqliteCacheMib?: number;
}

/** Throughput ABBA, paced latency and (unless `backlog` is 0) the backlog drain, on a SQLite store in `dataDir`. */
export async function runEventing(o: EventingOptions): Promise<EventingResult> {
  process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';
  // The engine runs in this process: the heap growth `svc serve` sets (src/serve/heap-growth.ts).
  const heapGrowth = limitHeapGrowth();
  // SERVICE_SQLITE_CACHE_MIB caps SQLite's page cache, which the backlog's RSS includes as pages are read.
  const cacheMib = sqliteCacheMibFromEnv();
  const store = await openStore(
    { backend: 'sqlite', dataDir: o.dataDir, ...(cacheMib !== undefined ? { sqliteCacheMib: cacheMib } : {}) },
    pino({ level: 'silent' }),
  );
  let rx: Receivers | undefined;
  try {
    await store.migrate();
    const tenant = newId();
    await store.transaction((tx) =>
      tx
        .insertInto('tenants')
        .values({ id: tenant, name: 'bench', region: 'default', status: 'active', created_at: nowTimestamp(), deleted_at: null })
        .execute(),
    );
    const sealer = new Sealer(randomBytes(32));
    const bus = new EventBus({ catalog: eventCatalog() });
    rx = await Receivers.start(o.onChild);
    const secrets: string[] = [];
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const { secret } = await store.withTenant(tenant, (tx) =>
        createSubscription(tx, sealer, tenant, 'bench', {
          name: `s${i}`,
          event_types: ['agent.created'],
          endpoint: `http://127.0.0.1:${(rx as Receivers).port}/s${i}`,
          sink_format: 'json',
          role: 'owner',
        }),
      );
      secrets.push(secret);
    }
    const rig: Rig = { store, tenant, bus, sealer, secrets, rx };
    const newRuntime = async (): Promise<EventingRuntime> => {
      const rt = new EventingRuntime({ store, sealer, bus, log: pino({ level: 'warn' }), version: 'bench', pollMs: 1000 });
      await rt.start();
      return rt;
    };
    let rt: EventingRuntime | undefined = await newRuntime();
    try {
      if (o.warmupEvents > 0) await svcBurst(rig, o.warmupEvents);
      o.log(`throughput, ABBA: ${o.events} events × ${SUBSCRIPTIONS} subscriptions per run …`);
      const a1 = await svcBurst(rig, o.events);
      const logged = await lastEvents(rig, o.events);
      const b1 = await bareBurst(rig, logged);
      const b2 = await bareBurst(rig, logged);
      const a2 = await svcBurst(rig, o.events);
      o.log(`svc ${a1.rate.toFixed(0)}, ${a2.rate.toFixed(0)}/s; bare ${b1.rate.toFixed(0)}, ${b2.rate.toFixed(0)}/s`);
      const svcRate = (a1.rate + a2.rate) / 2;
      const bareRate = (b1.rate + b2.rate) / 2;
      const svcCpu = (a1.cpuPer1k + a2.cpuPer1k) / 2;
      const bareCpu = (b1.cpuPer1k + b2.cpuPer1k) / 2;
      const rate = Math.max(1, Math.floor((svcRate * 0.5) / SUBSCRIPTIONS));
      o.log(`paced: ${rate} events/s (${rate * SUBSCRIPTIONS} deliveries/s) for ${o.pacedSeconds} s …`);
      const p = await paced(rig, rate, o.pacedSeconds);
      await rt.close();
      rt = undefined;
      let bl: BacklogResult | undefined;
      if (o.backlog > 0) {
        o.log(`backlog: ${o.backlog} deliveries …`);
        // backlog() starts its own engine and closes it.
        bl = await backlog(rig, o.backlog, newRuntime, o.log);
      }
      return {
        subscriptions: SUBSCRIPTIONS,
        events: o.events,
        svc: [a1, a2],
        bare: [b1, b2],
        svcRate,
        bareRate,
        svcCpuPer1k: svcCpu,
        bareCpuPer1k: bareCpu,
        ratio: svcRate / bareRate,
        cpuRatio: svcCpu / bareCpu,
        pacedEventsPerSec: rate,
        pacedSeconds: o.pacedSeconds,
        paced: p,
        ...(bl !== undefined ? { backlog: bl } : {}),
        heapGrowth,
        ...(cacheMib !== undefined ? { sqliteCacheMib: cacheMib } : {}),
      };
    } finally {
      await rt?.close();
    }
  } finally {
    rx?.child.kill();
    await store.close();
  }
}
