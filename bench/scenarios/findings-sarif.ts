/**
 * `findings-sarif`: collector findings ingest, then the SARIF export of what they became, against a
 * real `svc serve --seed-demo` over HTTPS/gRPC.
 *
 * 1. Ingest: `SVC_BENCH_FINDINGS` distinct findings (default 100,000) plus a quarter as many repeats
 *    of them (deduplicated by natural key), pushed as `Ingest/Push` finding items in batches of 500
 *    by 4 collector streams (2 batches in flight each; every ack durable in store and ledger), then
 *    folded into stored findings (`POST …/findings/evaluate` until nothing is left; one fold reads
 *    up to 5,000 items). Baseline in the same run: the same number of edge observations through the
 *    same Push path. `SVC_BENCH_REST_FINDINGS` (default 5,000) more go through
 *    `POST /v1/m/security/findings` in batches of 1,000 for the REST rate.
 * 2. Export: seconds and results/s, the server's peak RSS above idle, and `/healthz` p50/p99 during
 *    the export (a probe every 10 ms) against `/healthz` p50/p99 idle just before it. Baseline from
 *    the same run: `JSON.stringify` of the same number of SARIF result objects (built by the same
 *    encoder, shaped like the collector findings) in one array, without I/O.
 */
import { readFileSync } from 'node:fs';
import { get as httpsGet, Agent } from 'node:https';
import { join } from 'node:path';
import { sarifResultObject, type SarifFinding } from '../../src/encoders/sarif.js';
import { loadOrCreateTls } from '../../src/serve/tls.js';
import { startDemoSvc } from '../lib/demo.js';
import { pushBatches, type PushItems } from '../lib/grpc-push.js';
import { cpuSeconds } from '../lib/proc.js';
import type { BenchContext, Measurement, Scenario, ScenarioResult } from '../lib/types.js';

const MiB = 1024 * 1024;
const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;
const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.min(s.length - 1, Math.floor(q * s.length))] as number);
};

function probe(url: string, ca: string, agent: Agent): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    httpsGet(`${url}/healthz`, { ca, agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`/healthz ${res.statusCode}`))));
    }).on('error', reject);
  });
}

function download(url: string, ca: string, token: string): Promise<{ bytes: number; seconds: number; count: number; truncated: boolean }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    httpsGet(
      `${url}/v1/m/security/findings/export?format=sarif`,
      { ca, agent: false, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
        let bytes = 0;
        let tail = '';
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          tail = c.subarray(Math.max(0, c.length - 16)).toString('latin1');
        });
        res.on('end', () =>
          tail.endsWith(']}]}')
            ? resolve({
                bytes,
                seconds: (performance.now() - t0) / 1000,
                count: Number(res.headers['x-service-result-count']),
                truncated: res.headers['x-service-truncated'] === 'true',
              })
            : reject(new Error('export ended without its closing')),
        );
        res.on('error', reject);
      },
    ).on('error', reject);
  });
}

const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
const RULES = 20;

/** The collector item of finding `i` (the same `i` is the same natural key). */
function collectorItem(i: number): Record<string, unknown> {
  return {
    rule: `bench.rule.${i % RULES}`,
    severity: SEVERITIES[i % 5],
    subject: `pkg-${i}`,
    message: `bench finding ${i}: a dependency with a known vulnerability`,
  };
}

/** A stored collector finding of the same shape, as the encoder reads it (the baseline's input). */
function syntheticFinding(i: number): SarifFinding {
  return {
    id: `01890a5d-ac96-774b-bcce-${String(i).padStart(12, '0')}`,
    natural_key: (i.toString(16).padStart(8, '0') + 'ab'.repeat(28)).slice(0, 64),
    rule_id: `bench.rule.${i % RULES}`,
    kind: 'collector',
    severity: SEVERITIES[i % 5] as string,
    source: 'collector',
    subject_kind: 'subject',
    subject_ref: `pkg-${i}`,
    message: `bench finding ${i}: a dependency with a known vulnerability`,
    artifact_uri: null,
    region_start_line: null,
    region_end_line: null,
    tags: [`collector:bench-${i % 4}`],
    status: 'open',
    first_seen: '2026-06-02T10:00:00.000000000Z',
    last_seen: '2026-06-02T10:00:00.000000000Z',
    occurrences: 1,
  };
}

/** Batches of 500 items: every index of [0, n) once, then every fourth again (a repeat), in a shuffled-free deterministic order. */
function findingBatches(n: number): PushItems[] {
  const order = [...Array.from({ length: n }, (_, i) => i), ...Array.from({ length: Math.floor(n / 4) }, (_, k) => k * 4)];
  const out: PushItems[] = [];
  for (let i = 0; i < order.length; i += 500) out.push({ findings: order.slice(i, i + 500).map(collectorItem) });
  return out;
}

/** The same number of edge observations (the baseline through the same Push path). */
function edgeBatches(items: number): PushItems[] {
  const out: PushItems[] = [];
  for (let i = 0; i < items; i += 500) {
    out.push({
      edges: Array.from({ length: Math.min(500, items - i) }, (_, k) => ({
        origin_kind: 'identity',
        origin_ref: `sa-${(i + k) % 50}`,
        resource_ref: `res-${i + k}`,
        mode: k % 5 ? 'r' : 'rw',
        confidence: 'high',
        signal_source: 'bench',
      })),
    });
  }
  return out;
}

async function healthzWhile(url: string, ca: string, busy: () => boolean): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, ca });
  const out: number[] = [];
  try {
    while (busy()) {
      out.push(await probe(url, ca, agent).catch(() => NaN));
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    agent.destroy();
  }
  return out.filter((x) => !Number.isNaN(x));
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const n = Number(process.env['SVC_BENCH_FINDINGS'] ?? 100_000);
  const restN = Number(process.env['SVC_BENCH_REST_FINDINGS'] ?? 5_000);
  // Headroom above what the bench writes: the demo's own detector findings are exported too.
  process.env['SERVICE_FINDINGS_EXPORT_CAP'] = String(n + restN + 10_000);
  process.env['SERVICE_FINDINGS_EVALUATE_INTERVAL_S'] = '0';
  const demo = await startDemoSvc(ctx);
  const notes: string[] = [
    'shared 2-core machine, 8 engineers: figures are noisy',
    '/healthz probes and the download run in the harness process (not a separate one)',
  ];
  try {
    const ca = (await loadOrCreateTls({ dataDir: join(ctx.tmpDir, 'svc-data'), hosts: ['127.0.0.1'] })).certPem;
    const addr = `127.0.0.1:${demo.svc.grpcPort}`;
    const shape = { clients: 4, window: 2 };
    const fBatches = findingBatches(n);
    const items = fBatches.reduce((k, b) => k + (b.findings?.length ?? 0), 0);
    ctx.log(`pushing ${items} collector finding items (${n} distinct) over gRPC …`);
    const cpu0 = cpuSeconds(demo.svc.pid);
    const pushed = await pushBatches(addr, ca, demo.token, fBatches, shape);
    const cpu1 = cpuSeconds(demo.svc.pid);
    // Items younger than the fold's settle window (collector-sync.ts SETTLE_MS, 2 s) wait for the next fold.
    await new Promise((r) => setTimeout(r, 2_100));
    ctx.log('folding them into findings …');
    const f0 = performance.now();
    let folded = 0;
    let folds = 0;
    for (;;) {
      const out = await demo.call('POST', '/v1/m/security/findings/evaluate');
      const k = Number(out.collector.items);
      if (k === 0) break;
      folded += k;
      folds++;
    }
    const foldSeconds = (performance.now() - f0) / 1000;
    const cpu2 = cpuSeconds(demo.svc.pid);
    if (folded !== items) notes.push(`folded ${folded} items, pushed ${items}`);

    ctx.log(`writing ${restN} findings through POST /v1/m/security/findings …`);
    const r0 = performance.now();
    for (let i = 0; i < restN; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, restN - i) }, (_, k) => {
        const f = syntheticFinding(n + i + k);
        return {
          rule_id: f.rule_id,
          severity: f.severity,
          subject_kind: f.subject_kind,
          subject_ref: f.subject_ref,
          message: f.message,
          kind: 'bench',
        };
      });
      await demo.call('POST', '/v1/m/security/findings', { findings: batch });
    }
    const restSeconds = (performance.now() - r0) / 1000;
    const total = n + restN;

    const idleLat = await (async () => {
      const until = performance.now() + 3_000;
      return healthzWhile(demo.svc.url, ca, () => performance.now() < until);
    })();
    const idle = rssOf(demo.svc.pid);
    ctx.log(`exporting ${total} findings as SARIF …`);
    let peak = idle;
    let exporting = true;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(demo.svc.pid))), 50);
    const prober = healthzWhile(demo.svc.url, ca, () => exporting);
    const d = await download(demo.svc.url, ca, demo.token).finally(() => (exporting = false));
    const latencies = await prober;
    clearInterval(sampler);
    if (d.count < total || d.truncated) notes.push(`export carried ${d.count} results (truncated: ${d.truncated}), expected ${total}`);

    // Last: edges wake the detectors (edge.observed), whose runs would load the phases above.
    ctx.log(`baseline: pushing ${items} edge observations over gRPC …`);
    const edges = await pushBatches(addr, ca, demo.token, edgeBatches(items), shape);
    ctx.log('baseline: JSON.stringify of the same results without I/O …');
    const results = Array.from(
      { length: total },
      (_, i) => (sarifResultObject(syntheticFinding(i)) as { result: Record<string, unknown> }).result,
    );
    const heap0 = process.memoryUsage().heapUsed;
    const b0 = performance.now();
    const text = JSON.stringify({ version: '2.1.0', runs: [{ tool: { driver: { name: 'svc' } }, results }] });
    const baseSeconds = (performance.now() - b0) / 1000;
    const heapMiB = (process.memoryUsage().heapUsed - heap0) / MiB;
    const svc: Measurement = {
      target: 'svc',
      path: `GET /v1/m/security/findings/export (${total})`,
      requestsPerSec: total / d.seconds,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      detail: {
        unit: 'requestsPerSec = results/s; p50/p99 = /healthz latency during the export',
        exportSeconds: Number(d.seconds.toFixed(2)),
        mb: Number((d.bytes / MiB).toFixed(1)),
        idleRssMiB: Number((idle / MiB).toFixed(1)),
        peakRssMiB: Number((peak / MiB).toFixed(1)),
        peakRssAboveIdleMiB: Number(((peak - idle) / MiB).toFixed(1)),
        healthzProbes: latencies.length,
        idleHealthzP50Ms: Number(quantile(idleLat, 0.5).toFixed(2)),
        idleHealthzP99Ms: Number(quantile(idleLat, 0.99).toFixed(2)),
        idleHealthzProbes: idleLat.length,
      },
    };
    const ingest: Measurement = {
      target: 'svc-collector-findings',
      path: `Push ${items} finding items (${n} distinct) + fold`,
      requestsPerSec: items / (pushed.seconds + foldSeconds),
      p50Ms: NaN,
      p99Ms: NaN,
      detail: {
        unit: 'requestsPerSec = items/s from the first push to the last fold (settle wait excluded)',
        pushItemsPerSec: Math.round(pushed.accepted / pushed.seconds),
        pushSeconds: Number(pushed.seconds.toFixed(2)),
        foldItemsPerSec: Math.round(folded / foldSeconds),
        foldSeconds: Number(foldSeconds.toFixed(2)),
        folds,
        svcCpuMsPer1000Push: cpu0 === null || cpu1 === null ? null : Number((((cpu1 - cpu0) * 1e6) / items).toFixed(1)),
        svcCpuMsPer1000Fold: cpu1 === null || cpu2 === null ? null : Number((((cpu2 - cpu1) * 1e6) / items).toFixed(1)),
        restFindingsPerSec: Math.round(restN / restSeconds),
        restSeconds: Number(restSeconds.toFixed(2)),
      },
    };
    const edgeBase: Measurement = {
      target: 'grpc-edges',
      path: `Push ${items} edge observations`,
      requestsPerSec: edges.accepted / edges.seconds,
      p50Ms: NaN,
      p99Ms: NaN,
      detail: { seconds: Number(edges.seconds.toFixed(2)), accepted: edges.accepted },
    };
    const base: Measurement = {
      target: 'json-stringify',
      path: `JSON.stringify of ${total} results, no I/O`,
      requestsPerSec: total / baseSeconds,
      p50Ms: NaN,
      p99Ms: NaN,
      detail: {
        seconds: Number(baseSeconds.toFixed(3)),
        mb: Number((text.length / MiB).toFixed(1)),
        heapGrowthMiB: Number(heapMiB.toFixed(1)),
      },
    };
    ctx.log(
      `  export ${d.seconds.toFixed(2)} s (${Math.round(total / d.seconds)} results/s), peak RSS ` +
        `+${((peak - idle) / MiB).toFixed(1)} MiB, /healthz p99 ${svc.p99Ms.toFixed(2)} ms (idle ${quantile(idleLat, 0.99).toFixed(2)} ` +
        `ms); baseline ${baseSeconds.toFixed(3)} s`,
    );
    ctx.log(
      `  collector findings: push ${Math.round(pushed.accepted / pushed.seconds)} items/s, fold ${Math.round(folded / foldSeconds)} ` +
        `items/s, end to end ${Math.round(ingest.requestsPerSec)} items/s; edges baseline ${Math.round(edgeBase.requestsPerSec)}/s; ` +
        `REST ${Math.round(restN / restSeconds)} findings/s`,
    );
    return {
      raw: [svc, ingest],
      baselines: [base, edgeBase],
      ratios: [
        { name: 'export/json-stringify', path: 'results/s', requestsPerSec: svc.requestsPerSec / base.requestsPerSec, p50: NaN, p99: NaN },
        {
          name: 'export-healthz/idle-healthz',
          path: '/healthz p50, p99',
          requestsPerSec: NaN,
          p50: svc.p50Ms / quantile(idleLat, 0.5),
          p99: svc.p99Ms / quantile(idleLat, 0.99),
        },
        {
          name: 'collector-findings/grpc-edges',
          path: 'items/s (push + fold)',
          requestsPerSec: ingest.requestsPerSec / edgeBase.requestsPerSec,
          p50: NaN,
          p99: NaN,
        },
        {
          name: 'collector-findings-push/grpc-edges',
          path: 'items/s (push only)',
          requestsPerSec: pushed.accepted / pushed.seconds / edgeBase.requestsPerSec,
          p50: NaN,
          p99: NaN,
        },
      ],
      subject: { engine: demo.svc.engine, version: demo.svc.version, findings: total },
      notes,
    };
  } finally {
    await demo.stop();
  }
}


export const scenario: Scenario = {
  name: 'findings-sarif',
  description:
    'collector findings ingest (gRPC push + fold, baseline: edge observations through the same Push) and the SARIF export of 100,000 ' +
    'findings over HTTPS: seconds, results/s, peak RSS above idle, /healthz p50/p99 during it against idle; baseline JSON.stringify ' +
    'of the same results without I/O',
  run,
};
