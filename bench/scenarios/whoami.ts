/**
 * Scenario `whoami` (issue 3 Must show): authenticated `GET /v1/auth/whoami` with an API key on a
 * real `svc serve` over HTTPS, against the bare `/healthz` of the same server in the same run
 * (target: whoami ≥ 0.5 of healthz req/s). The demo administrator (`--seed-demo`, loopback)
 * issues the key through the API. The rate limiter stays on, with limits far above the load,
 * so its cost is measured but it never answers 429.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { loadOrCreateTls } from '../../src/serve/tls.js';
import { DEMO_ADMIN } from '../../src/core/setup/startup.js';
import { track } from '../lib/child.js';
import { startSvc, type SvcHandle } from '../lib/server.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';
import { parseWrkOutput, type WrkResult } from '../lib/wrk.js';

const WHOAMI = '/v1/auth/whoami';
const HEALTHZ = '/healthz';

/** The Lua `done` hook of bench/lib/wrk.ts plus request headers (wrk's `wrk.headers` table). */
function luaScript(headers: Record<string, string>): string {
  const set = Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join('\n');
  return `${set}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"max":%d,"mean":%.3f,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.max, latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
`;
}

async function wrk(ctx: BenchContext, url: string, durationS: number, headers: Record<string, string>): Promise<WrkResult> {
  const o = ctx.options;
  const script = join(ctx.tmpDir, `whoami-${Object.keys(headers).length}.lua`);
  await writeFile(script, luaScript(headers), { mode: 0o600 });
  const args = [`-t${o.threads}`, `-c${o.connections}`, `-d${durationS}s`, '--timeout', '5s', '--latency', '-s', script, url];
  const stdout = await new Promise<string>((resolve, reject) => {
    track(execFile('wrk', args, { timeout: (durationS + 30) * 1000, maxBuffer: 4 * 1024 * 1024 }, (err, out, errOut) => (err ? reject(new Error(`wrk failed: ${err.message}\n${errOut}`)) : resolve(out))));
  });
  return { ...parseWrkOutput(stdout), command: ['wrk', ...args], stdout };
}

async function post(dispatcher: Agent, url: string, body: unknown, token?: string): Promise<any> {
  const res = await request(url, { method: 'POST', dispatcher, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`POST ${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function summarise(path: string, rs: WrkResult[]): Measurement {
  const rounds = rs.map((r) => ({ requestsPerSec: r.requestsPerSec, p50Ms: r.p50Ms, p99Ms: r.p99Ms, exact: r.exact, errors: r.errors, non2xx3xx: r.non2xx3xx, command: r.command.join(' ') }));
  const errorsTotal = rs.reduce((n, r) => n + r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout + r.non2xx3xx, 0);
  return { target: 'svc', path, requestsPerSec: median(rs.map((r) => r.requestsPerSec)), p50Ms: median(rs.map((r) => r.p50Ms)), p99Ms: median(rs.map((r) => r.p99Ms)), detail: { aggregate: 'median', rounds, errorsTotal } };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const o = ctx.options;
  if (o.insecure || o.baselinesOnly) throw new Error('the whoami scenario measures svc itself over HTTPS: --insecure and --baselines-only do not apply');
  const dataDir = join(ctx.tmpDir, 'svc-data');
  const tls = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  const notes: string[] = [];
  let svc: SvcHandle | undefined;
  const dispatcher = new Agent({ connect: { ca: tls.certPem, servername: 'localhost' } });
  try {
    ctx.log('starting svc serve --seed-demo …');
    svc = await startSvc({
      repoRoot: ctx.repoRoot,
      dataDir,
      insecure: false,
      logFile: join(ctx.tmpDir, 'svc.log'),
      expectCertPem: tls.certPem,
      env: { SERVICE_SEED_DEMO: 'true', SERVICE_RATE_LIMIT_RPS: '10000000', SERVICE_RATE_LIMIT_BURST: '10000000', ...(o.accessLog ? {} : { SERVICE_ACCESS_LOG: 'false' }) },
    });
    const session = await post(dispatcher, `${svc.url}/v1/auth/login`, { email: DEMO_ADMIN.email, password: DEMO_ADMIN.password });
    const key = await post(dispatcher, `${svc.url}/v1/tokens`, { name: 'bench' }, session.token as string);
    const auth = { Authorization: `Bearer ${key.token as string}` };
    const check = await request(`${svc.url}${WHOAMI}`, { dispatcher, headers: auth });
    const who = JSON.parse(await check.body.text()) as { kind?: string };
    if (check.statusCode !== 200 || who.kind !== 'token') throw new Error(`whoami with the API key answered ${check.statusCode}`);

    const runs = new Map<string, WrkResult[]>();
    const targets: Array<{ path: string; headers: Record<string, string> }> = [
      { path: HEALTHZ, headers: {} },
      { path: WHOAMI, headers: auth },
    ];
    for (let round = 0; round < o.rounds; round++) {
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + round) % targets.length] as (typeof targets)[number];
        if (round === 0 && o.warmup > 0) await wrk(ctx, `${svc.url}${t.path}`, o.warmup, t.headers);
        ctx.log(`round ${round + 1}/${o.rounds}: ${t.path} (${o.duration}s)`);
        runs.set(t.path, [...(runs.get(t.path) ?? []), await wrk(ctx, `${svc.url}${t.path}`, o.duration, t.headers)]);
      }
    }
    const whoami = summarise(WHOAMI, runs.get(WHOAMI) ?? []);
    const healthz = summarise(HEALTHZ, runs.get(HEALTHZ) ?? []);
    for (const m of [whoami, healthz]) if ((m.detail.errorsTotal as number) > 0) notes.push(`${m.path}: ${String(m.detail.errorsTotal)} errors or non-2xx answers`);
    const ratio: Ratio = { name: 'whoami/healthz', path: WHOAMI, requestsPerSec: whoami.requestsPerSec / healthz.requestsPerSec, p50: whoami.p50Ms / healthz.p50Ms, p99: whoami.p99Ms / healthz.p99Ms };
    notes.push(`target: whoami ≥ 0.5 × healthz req/s → ${ratio.requestsPerSec >= 0.5 ? 'met' : 'NOT met'} (${ratio.requestsPerSec.toFixed(2)})`);
    return { raw: [whoami], baselines: [healthz], ratios: [ratio], subject: { command: svc.args.join(' '), version: svc.version, engine: svc.engine, credential: 'API key (svck_)', rateLimiter: 'on, 10M rps' }, notes };
  } finally {
    await dispatcher.close();
    await svc?.stop();
  }
}

export const scenario: Scenario = {
  name: 'whoami',
  description: 'GET /v1/auth/whoami with an API key vs GET /healthz on the same svc over HTTPS (wrk, same settings, same run)',
  run,
};
