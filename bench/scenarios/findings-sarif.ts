/**
 * `findings-sarif`: SARIF export of `SVC_BENCH_FINDINGS` findings (default 100,000) from a real
 * `svc serve --seed-demo` over HTTPS: export seconds and results/s, the server's peak RSS above
 * idle, and `/healthz` p50/p99 during the export (a probe every 10 ms, from this process). The
 * findings are written first through `POST /v1/m/security/findings` in batches of 1,000, which gives
 * the REST findings ingest rate. Baseline from the same run: `JSON.stringify` of the same number of
 * SARIF result objects (built by the same encoder) in one array, without I/O.
 */
import { readFileSync } from 'node:fs';
import { get as httpsGet, Agent } from 'node:https';
import { join } from 'node:path';
import { sarifResultObject, type SarifFinding } from '../../src/encoders/sarif.js';
import { loadOrCreateTls } from '../../src/serve/tls.js';
import { startDemoSvc } from '../lib/demo.js';
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
    httpsGet(`${url}/v1/m/security/findings/export?format=sarif`, { ca, agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
      let bytes = 0;
      let tail = '';
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        tail = c.subarray(Math.max(0, c.length - 16)).toString('latin1');
      });
      res.on('end', () => (tail.endsWith(']}]}') ? resolve({ bytes, seconds: (performance.now() - t0) / 1000, count: Number(res.headers['x-service-result-count']), truncated: res.headers['x-service-truncated'] === 'true' }) : reject(new Error('export ended without its closing'))));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function syntheticFinding(i: number): SarifFinding {
  return {
    id: `01890a5d-ac96-774b-bcce-${String(i).padStart(12, '0')}`,
    natural_key: (i.toString(16).padStart(8, '0') + 'ab'.repeat(28)).slice(0, 64),
    rule_id: `bench.rule.${i % 20}`,
    kind: 'bench',
    severity: (['info', 'low', 'medium', 'high', 'critical'] as const)[i % 5] as string,
    source: 'integration',
    subject_kind: 'package',
    subject_ref: `pkg-${i}`,
    message: `bench finding ${i}: a dependency with a known vulnerability`,
    artifact_uri: i % 2 === 0 ? `src/module-${i % 100}/file-${i}.ts` : null,
    region_start_line: i % 2 === 0 ? 1 + (i % 400) : null,
    region_end_line: null,
    tags: ['bench'],
    status: 'open',
    first_seen: '2026-06-02T10:00:00.000000000Z',
    last_seen: '2026-06-02T10:00:00.000000000Z',
    occurrences: 1,
  };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const n = Number(process.env['SVC_BENCH_FINDINGS'] ?? 100_000);
  process.env['SERVICE_FINDINGS_EXPORT_CAP'] = String(n);
  process.env['SERVICE_FINDINGS_EVALUATE_INTERVAL_S'] = '0';
  const demo = await startDemoSvc(ctx);
  const notes: string[] = ['shared 2-core machine, 8 engineers: figures are noisy', '/healthz probes and the download run in the harness process (not a separate one)'];
  try {
    const ca = (await loadOrCreateTls({ dataDir: join(ctx.tmpDir, 'svc-data'), hosts: ['127.0.0.1'] })).certPem;
    ctx.log(`writing ${n} findings through POST /v1/m/security/findings …`);
    const t0 = performance.now();
    for (let i = 0; i < n; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, n - i) }, (_, k) => {
        const f = syntheticFinding(i + k);
        return { rule_id: f.rule_id, severity: f.severity, subject_kind: f.subject_kind, subject_ref: f.subject_ref, message: f.message, kind: 'bench', ...(f.artifact_uri ? { artifact_uri: f.artifact_uri, region: { start_line: f.region_start_line as number } } : {}) };
      });
      await demo.call('POST', '/v1/m/security/findings', { findings: batch });
    }
    const ingestSeconds = (performance.now() - t0) / 1000;
    const idle = rssOf(demo.svc.pid);
    ctx.log(`exporting ${n} findings as SARIF …`);
    const agent = new Agent({ keepAlive: true, ca });
    const latencies: number[] = [];
    let peak = idle;
    let exporting = true;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(demo.svc.pid))), 50);
    const prober = (async () => {
      while (exporting) {
        latencies.push(await probe(demo.svc.url, ca, agent).catch(() => NaN));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const d = await download(demo.svc.url, ca, demo.token);
    exporting = false;
    await prober;
    clearInterval(sampler);
    agent.destroy();
    if (d.count !== n || d.truncated) notes.push(`export carried ${d.count} results (truncated: ${d.truncated}), expected ${n}`);

    ctx.log('baseline: JSON.stringify of the same results without I/O …');
    const results = Array.from({ length: n }, (_, i) => (sarifResultObject(syntheticFinding(i)) as { result: Record<string, unknown> }).result);
    const heap0 = process.memoryUsage().heapUsed;
    const b0 = performance.now();
    const text = JSON.stringify({ version: '2.1.0', runs: [{ tool: { driver: { name: 'svc' } }, results }] });
    const baseSeconds = (performance.now() - b0) / 1000;
    const heapMiB = (process.memoryUsage().heapUsed - heap0) / MiB;
    const ok = latencies.filter((x) => !Number.isNaN(x));
    const svc: Measurement = {
      target: 'svc',
      path: `GET /v1/m/security/findings/export (${n})`,
      requestsPerSec: n / d.seconds,
      p50Ms: quantile(ok, 0.5),
      p99Ms: quantile(ok, 0.99),
      detail: { unit: 'requestsPerSec = results/s; p50/p99 = /healthz latency during the export', exportSeconds: Number(d.seconds.toFixed(2)), mb: Number((d.bytes / MiB).toFixed(1)), idleRssMiB: Number((idle / MiB).toFixed(1)), peakRssMiB: Number((peak / MiB).toFixed(1)), peakRssAboveIdleMiB: Number(((peak - idle) / MiB).toFixed(1)), healthzProbes: ok.length, ingestFindingsPerSec: Math.round(n / ingestSeconds), ingestSeconds: Number(ingestSeconds.toFixed(1)) },
    };
    const base: Measurement = { target: 'json-stringify', path: `JSON.stringify of ${n} results, no I/O`, requestsPerSec: n / baseSeconds, p50Ms: NaN, p99Ms: NaN, detail: { seconds: Number(baseSeconds.toFixed(3)), mb: Number((text.length / MiB).toFixed(1)), heapGrowthMiB: Number(heapMiB.toFixed(1)) } };
    ctx.log(`  export ${d.seconds.toFixed(2)} s (${Math.round(n / d.seconds)} results/s), peak RSS +${((peak - idle) / MiB).toFixed(1)} MiB, /healthz p99 ${svc.p99Ms.toFixed(2)} ms; baseline ${baseSeconds.toFixed(3)} s; ingest ${Math.round(n / ingestSeconds)} findings/s`);
    return { raw: [svc], baselines: [base], ratios: [{ name: 'export/json-stringify', path: 'results/s', requestsPerSec: svc.requestsPerSec / base.requestsPerSec, p50: NaN, p99: NaN }], subject: { engine: demo.svc.engine, version: demo.svc.version, findings: n }, notes };
  } finally {
    await demo.stop();
  }
}

export const scenario: Scenario = {
  name: 'findings-sarif',
  description: 'SARIF export of 100,000 findings over HTTPS: seconds, results/s, peak RSS above idle, /healthz p50/p99 during it; REST findings ingest rate; baseline JSON.stringify of the same results without I/O',
  run,
};
