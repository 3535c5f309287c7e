/**
 * Scenario `ingest` (issue 6): 16 concurrent collector-equivalent gRPC clients push edge
 * observations to a real `svc serve` (TLS, SQLite, synchronous=FULL) over `Ingest/Push`, each with
 * 4 batches of 500 in flight (`SVC_BENCH_INGEST_WINDOW`, `SVC_BENCH_INGEST_BATCH`), or paced together
 * at `SVC_BENCH_INGEST_RATE` observations/s (open loop, latency from when a batch was due). Reported: sustained observations/s acked as
 * durable (store + ledger),
 * ack latency p50/p99 per batch, and, from the same run, the raw two-core Ed25519 sign rate of the
 * ledger's worker pool. One ledger record seals each batch (its payload_hash covers every item),
 * so the sign rate bounds batches/s, not observations/s. Targets: ≥ 25,000 observations/s, ack
 * p99 ≤ 100 ms.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metadata, credentials, type ClientDuplexStream } from '@grpc/grpc-js';
import { Agent, request } from 'undici';
import { serviceClient } from '../../src/grpc/proto.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { createWorkerPool } from '../../src/workers/pool.js';
import { startSvc } from '../lib/server.js';
import { rawEd25519Rate } from '../lib/raw-ed25519.js';
import { cpuSeconds } from '../lib/proc.js';
import type { BenchContext, Measurement, Scenario, ScenarioResult } from '../lib/types.js';

export const CLIENTS = 16;

/** A positive integer knob from the environment. */
function knob(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
}

export interface ClientRun {
  accepted: number;
  latencies: number[];
}

/** What each client sends: `rate` > 0 paces the clients together at that many observations/s. */
export interface Shape {
  batch: number;
  window: number;
  rate: number;
}

/**
 * One collector-equivalent client. Closed loop (`rate` 0): keeps `window` batches of `batch` edges
 * in flight until `until`. Paced: sends one batch every `clients * batch / rate` seconds (offset
 * per client), at most `window` unacked; a batch held back by the window waits in a backlog, and
 * its latency still counts from when it was due, so a slow server cannot hide queueing.
 */
export async function runClient(
  addr: string,
  ca: Buffer,
  token: string,
  n: number,
  shape: Shape,
  until: number,
  measureFrom: number,
  out: ClientRun,
): Promise<void> {
  const Client = serviceClient('Ingest');
  const client = new Client(addr, credentials.createSsl(ca), { 'grpc.use_local_subchannel_pool': 1 });
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  const stream = (
    client as unknown as { Push(md: Metadata): ClientDuplexStream<unknown, { batch_id: string; accepted: number; status: string }> }
  ).Push(md);
  const sent = new Map<string, number>();
  const backlog: number[] = [];
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  const batch = (due = performance.now()) => {
    const id = randomUUID();
    const edges = Array.from({ length: shape.batch }, (_, i) => ({
      origin_kind: 'identity',
      origin_ref: `sa-${n}-${i % 20}`,
      resource_ref: `res-${(seq * 7 + i) % 5000}`,
      mode: i % 5 ? 'r' : 'rw',
      confidence: 'high',
      signal_source: `bench-${n}`,
    }));
    seq++;
    sent.set(id, due);
    stream.write({ batch_id: id, collector: `bench-${n}`, edges });
  };
  const intervalMs = (CLIENTS * shape.batch * 1000) / Math.max(1, shape.rate);
  const tick = (due: number) => {
    if (due >= until) {
      // The pace is over; with every batch already acked nothing else would end the stream.
      if (sent.size === 0 && backlog.length === 0) stream.end();
      return;
    }
    if (sent.size < shape.window && backlog.length === 0) batch(due);
    else backlog.push(due);
    timer = setTimeout(() => tick(due + intervalMs), Math.max(0, due + intervalMs - performance.now()));
  };
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (ack: { batch_id: string; accepted: number; status: string }) => {
      const t0 = sent.get(ack.batch_id);
      sent.delete(ack.batch_id);
      const now = performance.now();
      // Throughput counts the acks that arrive inside the window, whenever their batch was sent.
      if (t0 !== undefined && now >= measureFrom && now <= until) {
        out.accepted += ack.accepted;
        out.latencies.push(now - t0);
      }
      if (shape.rate === 0 && now < until) batch();
      else if (backlog.length > 0) batch(backlog.shift());
      else if (sent.size === 0 && (shape.rate === 0 || now >= until)) stream.end();
    });
    stream.on('error', reject);
    stream.on('end', resolve);
    if (shape.rate === 0) for (let i = 0; i < shape.window; i++) batch();
    else tick(performance.now() + (intervalMs * n) / CLIENTS);
  });
  clearTimeout(timer);
  client.close();
}

async function rawSignRate(dataDir: string, seconds: number): Promise<{ rate: number; threads: number }> {
  const keyring = await Keyring.open({ dataDir, env: {} });
  const pool = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
  try {
    const hashes = Buffer.alloc(32 * 512, 7);
    let signed = 0;
    let stop = false;
    const started = performance.now();
    const timer = setTimeout(() => (stop = true), seconds * 1000);
    await Promise.all(
      Array.from({ length: pool.threads * 2 }, async () => {
        let s = 1;
        while (!stop) {
          await pool.signBatch({ keyId: keyring.active.keyId, tenant: '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f', firstSeq: s, hashes });
          s += 512;
          signed += 512;
        }
      }),
    );
    clearTimeout(timer);
    return { rate: signed / ((performance.now() - started) / 1000), threads: pool.threads };
  } finally {
    await pool.close();
  }
}


export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const BATCH = knob('SVC_BENCH_INGEST_BATCH', 500);
  const WINDOW = knob('SVC_BENCH_INGEST_WINDOW', 4);
  const RATE = process.env['SVC_BENCH_INGEST_RATE'] ? knob('SVC_BENCH_INGEST_RATE', 0) : 0;
  ctx.log('raw Ed25519 sign rates: node:crypto on 2 threads, then the ledger pool …');
  const nodeSign = await rawEd25519Rate('node-crypto', 'sign', 2, Math.min(5, ctx.options.duration));
  const sign = await rawSignRate(join(ctx.tmpDir, 'sign'), Math.min(5, ctx.options.duration));
  const dataDir = join(ctx.tmpDir, 'svc');
  const svc = await startSvc({
    repoRoot: ctx.repoRoot,
    dataDir,
    insecure: false,
    logFile: join(ctx.tmpDir, 'svc.log'),
    env: { SERVICE_RATE_LIMIT_RPS: '0' },
  });
  try {
    const ca = readFileSync(join(dataDir, 'tls', 'cert.pem'));
    const dispatcher = new Agent({ connect: { ca } });
    const post = async (path: string, body: unknown, token?: string, tenant?: string) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token) headers['authorization'] = `Bearer ${token}`;
      if (tenant) headers['x-service-tenant'] = tenant;
      const res = await request(`${svc.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers, dispatcher });
      const json = (await res.body.json()) as Record<string, any>;
      if (res.statusCode >= 300) throw new Error(`POST ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
      return json;
    };
    const setupToken = /svcst_[A-Z2-7]+/.exec(readFileSync(svc.logFile, 'utf8'))?.[0];
    if (!setupToken) throw new Error('no setup token in the svc output');
    const admin = { email: 'bench@example.test', password: 'bench password 12345' };
    const setup = await post('/v1/setup', { token: setupToken, ...admin, organization: 'Bench' });
    const tenant = setup['organization'].id as string;
    const session = (await post('/v1/auth/login', admin))['token'] as string;
    const token = (await post('/v1/tokens', { name: 'bench-ingest', role: 'admin', tenant }, session, tenant))['token'] as string;
    await dispatcher.close();
    const addr = `127.0.0.1:${svc.grpcPort}`;
    const start = performance.now();
    const measureFrom = start + ctx.options.warmup * 1000;
    const until = measureFrom + ctx.options.duration * 1000;
    ctx.log(
      `${CLIENTS} clients, batches of ${BATCH}, ${RATE > 0 ? `paced at ${RATE} observations/s, at most ${WINDOW}` : WINDOW} in ` +
        `flight: warm-up ${ctx.options.warmup} s, measuring ${ctx.options.duration} s …`,
    );
    const runs: ClientRun[] = Array.from({ length: CLIENTS }, () => ({ accepted: 0, latencies: [] }));
    // The server's CPU time over the measured window: CPU per observation holds up on a busy machine better than observations/s.
    const cpu: Array<number | null> = [];
    const marks = [
      setTimeout(() => cpu.push(cpuSeconds(svc.pid)), measureFrom - performance.now()),
      setTimeout(() => cpu.push(cpuSeconds(svc.pid)), until - performance.now()),
    ];
    await Promise.all(
      runs.map((r, n) => runClient(addr, ca, token, n, { batch: BATCH, window: WINDOW, rate: RATE }, until, measureFrom, r)),
    );
    marks.forEach(clearTimeout);
    const accepted = runs.reduce((n, r) => n + r.accepted, 0);
    const cpuMsPer1000 =
      cpu.length === 2 && cpu[0] != null && cpu[1] != null && accepted > 0
        ? Number((((cpu[1] - cpu[0]) * 1e6) / accepted).toFixed(1))
        : null;
    const lat = runs.flatMap((r) => r.latencies);
    const rate = accepted / ctx.options.duration;
    const p50 = quantile(lat, 0.5);
    const p99 = quantile(lat, 0.99);
    const m: Measurement = {
      target: 'svc-grpc-ingest',
      path: `Push (${CLIENTS} clients, batch ${BATCH}${RATE > 0 ? `, paced ${RATE}/s` : ''})`,
      requestsPerSec: Math.round(rate),
      p50Ms: Number(p50.toFixed(2)),
      p99Ms: Number(p99.toFixed(2)),
      detail: { observations: accepted, batches: lat.length, window: WINDOW, offered: RATE || null, svc_cpu_ms_per_1000: cpuMsPer1000 },
    };
    return {
      raw: [m],
      baselines: [
        { target: 'node-crypto-ed25519-sign', path: '2 threads', requestsPerSec: Math.round(nodeSign), p50Ms: 0, p99Ms: 0, detail: {} },
        // The pool the server signs with (its engine: libsodium by default, see SERVICE_CRYPTO_ENGINE).
        {
          target: 'ledger-pool-sign',
          path: `${sign.threads} threads`,
          requestsPerSec: Math.round(sign.rate),
          p50Ms: 0,
          p99Ms: 0,
          detail: { batch: 512 },
        },
      ],
      ratios: [],
      subject: {
        version: svc.version,
        engine: svc.engine,
        store: 'sqlite',
        sqlite_synchronous: 'full',
        tls: true,
        clients: CLIENTS,
        batch: BATCH,
        window: WINDOW,
        offered_rate: RATE || null,
      },
      notes: [
        `durable ingest: ${Math.round(rate)} observations/s (target ≥ 25,000) — ${rate >= 25_000 ? 'met' : 'NOT met'}`,
        `ack latency p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${lat.length} batches (target p99 ≤ 100 ms) — ` +
          `${lat.length > 0 && p99 <= 100 ? 'met' : 'NOT met'}`,
        RATE > 0
          ? `paced: ${RATE} observations/s offered (${Math.round((100 * rate) / RATE)}% acked in the window); latency counts from when ` +
            `each batch was due`
          : `closed loop: ${CLIENTS * WINDOW * BATCH} observations always in flight, so the mean ack latency is in-flight / throughput ` +
            `≈ ${rate > 0 ? Math.round((CLIENTS * WINDOW * BATCH * 1000) / rate) : '∞'} ms whatever the server does; ` +
            `SVC_BENCH_INGEST_RATE measures latency at a set load`,
        `svc CPU (all threads) per 1,000 acked observations: ${cpuMsPer1000 ?? 'n/a'} ms`,
        `ledger pool sign rate ${Math.round(sign.rate)}/s on ${sign.threads} threads (raw node:crypto ${Math.round(nodeSign)}/s): ` +
          `one ledger record per batch, so the ledger ceiling is ${Math.round(sign.rate)} batches/s (${Math.round(sign.rate * BATCH)} ` +
          `observations/s)`,
      ],
    };
  } finally {
    await svc.stop();
  }
}

export const scenario: Scenario = {
  name: 'ingest',
  description:
    '16 concurrent gRPC ingest clients against svc serve (TLS, SQLite): durable observations/s and ack latency, vs the raw Ed25519 ' +
    'sign rate',
  run,
};
