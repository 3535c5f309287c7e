/**
 * Scenario `ingest` (issue 6): 16 concurrent collector-equivalent gRPC clients push edge
 * observations to a real `svc serve` (TLS, SQLite, synchronous=FULL) over `Ingest/Push`, each with
 * 4 batches of 500 in flight. Reported: sustained observations/s acked as durable (store + ledger),
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
import type { BenchContext, Measurement, Scenario, ScenarioResult } from '../lib/types.js';

const CLIENTS = 16;
const BATCH = 500;
const WINDOW = 4;

interface ClientRun {
  accepted: number;
  latencies: number[];
}

/** One collector-equivalent client: keeps WINDOW batches in flight until `until`. */
async function runClient(addr: string, ca: Buffer, token: string, n: number, until: number, measureFrom: number, out: ClientRun): Promise<void> {
  const Client = serviceClient('Ingest');
  const client = new Client(addr, credentials.createSsl(ca), { 'grpc.use_local_subchannel_pool': 1 });
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  const stream = (client as unknown as { Push(md: Metadata): ClientDuplexStream<unknown, { batch_id: string; accepted: number; status: string }> }).Push(md);
  const sent = new Map<string, number>();
  let seq = 0;
  const batch = () => {
    const id = randomUUID();
    const edges = Array.from({ length: BATCH }, (_, i) => ({ origin_kind: 'identity', origin_ref: `sa-${n}-${i % 20}`, resource_ref: `res-${(seq * 7 + i) % 5000}`, mode: i % 5 ? 'r' : 'rw', confidence: 'high', signal_source: `bench-${n}` }));
    seq++;
    sent.set(id, performance.now());
    stream.write({ batch_id: id, collector: `bench-${n}`, edges });
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
      if (now < until) batch();
      else if (sent.size === 0) stream.end();
    });
    stream.on('error', reject);
    stream.on('end', resolve);
    for (let i = 0; i < WINDOW; i++) batch();
  });
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

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  ctx.log('raw Ed25519 sign rate (2 worker threads) …');
  const sign = await rawSignRate(join(ctx.tmpDir, 'sign'), Math.min(5, ctx.options.duration));
  const dataDir = join(ctx.tmpDir, 'svc');
  const svc = await startSvc({ repoRoot: ctx.repoRoot, dataDir, insecure: false, logFile: join(ctx.tmpDir, 'svc.log'), env: { SERVICE_RATE_LIMIT_RPS: '0' } });
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
    ctx.log(`${CLIENTS} clients × ${WINDOW} batches of ${BATCH} in flight: warm-up ${ctx.options.warmup} s, measuring ${ctx.options.duration} s …`);
    const runs: ClientRun[] = Array.from({ length: CLIENTS }, () => ({ accepted: 0, latencies: [] }));
    await Promise.all(runs.map((r, n) => runClient(addr, ca, token, n, until, measureFrom, r)));
    const accepted = runs.reduce((n, r) => n + r.accepted, 0);
    const lat = runs.flatMap((r) => r.latencies);
    const rate = accepted / ctx.options.duration;
    const p50 = quantile(lat, 0.5);
    const p99 = quantile(lat, 0.99);
    const m: Measurement = { target: 'svc-grpc-ingest', path: `Push (${CLIENTS} clients, batch ${BATCH})`, requestsPerSec: Math.round(rate), p50Ms: Number(p50.toFixed(2)), p99Ms: Number(p99.toFixed(2)), detail: { observations: accepted, batches: lat.length, window: WINDOW } };
    return {
      raw: [m],
      baselines: [{ target: 'node-crypto-ed25519-sign', path: `${sign.threads} threads`, requestsPerSec: Math.round(sign.rate), p50Ms: 0, p99Ms: 0, detail: { batch: 512 } }],
      ratios: [],
      subject: { version: svc.version, engine: svc.engine, store: 'sqlite', sqlite_synchronous: 'full', tls: true, clients: CLIENTS, batch: BATCH, window: WINDOW },
      notes: [
        `durable ingest: ${Math.round(rate)} observations/s (target ≥ 25,000) — ${rate >= 25_000 ? 'met' : 'NOT met'}`,
        `ack latency p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${lat.length} batches (target p99 ≤ 100 ms) — ${lat.length > 0 && p99 <= 100 ? 'met' : 'NOT met'}`,
        `raw Ed25519 sign rate ${Math.round(sign.rate)}/s on ${sign.threads} threads: one ledger record per batch, so the ledger ceiling is ${Math.round(sign.rate)} batches/s (${Math.round(sign.rate * BATCH)} observations/s)`,
      ],
    };
  } finally {
    await svc.stop();
  }
}

export const scenario: Scenario = {
  name: 'ingest',
  description: '16 concurrent gRPC ingest clients against svc serve (TLS, SQLite): durable observations/s and ack latency, vs the raw Ed25519 sign rate',
  run,
};
