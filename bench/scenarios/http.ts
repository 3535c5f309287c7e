/**
 * Scenario `http` (issue 2 item 9): `/healthz` and `/v1/server-info` on a real `svc serve` over
 * HTTPS, against a bare uWS handler and a bare node:https handler serving the same bytes with the
 * same certificate, all driven by wrk with identical settings in the same run.
 */
import { join } from 'node:path';
import { loadOrCreateTls } from '../../src/serve/tls.js';
import type { BaselineRoute } from '../lib/baseline-child.js';
import { startBaseline, type BaselineHandle } from '../lib/baselines.js';
import { getOnce } from '../lib/http-get.js';
import { startSvc, type SvcHandle } from '../lib/server.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';
import { runWrk, type WrkResult } from '../lib/wrk.js';

const PATHS = ['/healthz', '/v1/server-info'] as const;

/** Stand-in bodies for `--baselines-only`, shaped like svc's answers. */
const PLACEHOLDER: Record<string, BaselineRoute> = {
  '/healthz': { body: '{"status":"ok"}', contentType: 'application/json' },
  '/v1/server-info': { body: '{"version":"0.1.0","engine":{"http":"uws-native"},"setup_required":true}', contentType: 'application/json' },
};

interface Target {
  name: string;
  url: string;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { options: o } = ctx;
  const dataDir = join(ctx.tmpDir, 'svc-data');
  // Generate the certificate before svc starts: svc reuses it (same data dir, SANs already
  // cover 127.0.0.1), and the baselines are handed the very same files.
  const tls = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  const certFiles = o.insecure ? {} : { certPath: tls.certPath, keyPath: tls.keyPath };
  const notes: string[] = [];
  const subject: Record<string, unknown> = { scheme: o.insecure ? 'http' : 'https' };
  let svc: SvcHandle | undefined;
  const baselines: BaselineHandle[] = [];
  try {
    let routes = PLACEHOLDER;
    if (!o.baselinesOnly) {
      ctx.log('starting svc serve …');
      svc = await startSvc({
        repoRoot: ctx.repoRoot,
        dataDir,
        insecure: o.insecure,
        logFile: join(ctx.tmpDir, 'svc.log'),
        expectCertPem: tls.certPem,
        env: o.accessLog ? {} : { SERVICE_ACCESS_LOG: 'false' },
      });
      Object.assign(subject, {
        command: svc.args.join(' '),
        version: svc.version,
        engine: svc.engine,
        serverInfo: svc.serverInfo,
        listeningLog: svc.listening ?? null,
        accessLog: o.accessLog,
      });
      if (!o.insecure) {
        Object.assign(subject, {
          fingerprintSha256: tls.fingerprintSha256,
          pinSha256: tls.pinSha256,
          servedFingerprint: svc.peerFingerprint256,
          tlsVerified: svc.tlsVerified,
        });
        if (svc.peerFingerprint256 !== tls.fingerprintSha256)
          notes.push('svc served a different certificate than the baselines; TLS costs may differ');
      }
      // The baselines answer with svc's exact bytes, so the ratio is framework cost, not payload size.
      routes = {};
      for (const path of PATHS) {
        const r = await getOnce(`${svc.url}${path}`);
        if (r.status !== 200) throw new Error(`svc ${path} answered ${r.status}; refusing to benchmark an error response`);
        routes[path] = { body: r.body, contentType: String(r.headers['content-type'] ?? 'application/json') };
      }
      subject.responseBytes = Object.fromEntries(PATHS.map((p) => [p, Buffer.byteLength(routes[p]?.body ?? '')]));
    } else {
      notes.push('--baselines-only: svc was not measured, no ratios');
    }

    ctx.log('starting baselines …');
    baselines.push(await startBaseline('uws', { ...certFiles, routes }));
    baselines.push(await startBaseline('node', { ...certFiles, routes }));

    const targets: Target[] = [];
    if (svc) targets.push({ name: 'svc', url: svc.url });
    for (const b of baselines) targets.push({ name: b.kind === 'uws' ? 'uws-bare' : `${b.engine.replace(':', '-')}-bare`, url: b.url });

    // Interleaved rounds, target order rotated each round: on a shared machine load drifts over
    // a minute, and the median of short interleaved runs tracks it far better than one long run.
    const runs = new Map<string, WrkResult[]>();
    for (let round = 0; round < o.rounds; round++) {
      for (const path of PATHS) {
        for (let i = 0; i < targets.length; i++) {
          const t = targets[(i + round) % targets.length] as Target;
          const wrk = { threads: o.threads, connections: o.connections, scriptDir: ctx.tmpDir, url: `${t.url}${path}` };
          if (round === 0 && o.warmup > 0) {
            ctx.log(`warm-up ${t.name} ${path} (${o.warmup}s)`);
            await runWrk({ ...wrk, durationS: o.warmup });
          }
          ctx.log(`round ${round + 1}/${o.rounds}: ${t.name} ${path} (${o.duration}s)`);
          const r = await runWrk({ ...wrk, durationS: o.duration });
          const key = `${t.name} ${path}`;
          runs.set(key, [...(runs.get(key) ?? []), r]);
        }
      }
    }
    const raw: Measurement[] = [];
    const base: Measurement[] = [];
    for (const path of PATHS) {
      for (const t of targets) {
        const m = summarise(t.name, path, runs.get(`${t.name} ${path}`) ?? []);
        const errorsTotal = m.detail.errorsTotal as number;
        if (errorsTotal > 0) notes.push(`${t.name} ${path}: ${errorsTotal} errors or non-2xx/3xx responses (see detail.rounds)`);
        (t.name === 'svc' ? raw : base).push(m);
      }
    }
    const all = ratios(raw, base);
    const uws = all.find((r) => r.name === 'svc/uws-bare' && r.path === '/healthz');
    if (uws !== undefined) {
      const met = uws.requestsPerSec >= 0.65 ? 'met' : 'NOT met';
      notes.push(`target (issue 36): svc /healthz ≥ 0.65 × bare uWS req/s → ${met} (${uws.requestsPerSec.toFixed(2)})`);
    }
    return { raw, baselines: base, ratios: all, subject, notes };
  } finally {
    await Promise.all([svc?.stop(), ...baselines.map((b) => b.stop())]);
  }
}

/** Median over rounds for the headline figures; every round kept in `detail.rounds`. */
function summarise(target: string, path: string, rs: WrkResult[]): Measurement {
  const rounds = rs.map((r) => ({
    requestsPerSec: r.requestsPerSec,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    exact: r.exact,
    errors: r.errors,
    non2xx3xx: r.non2xx3xx,
    command: r.command.join(' '),
  }));
  const errorsTotal = rs.reduce(
    (n, r) => n + r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout + r.non2xx3xx,
    0,
  );
  const rps = rs.map((r) => r.requestsPerSec);
  return {
    target,
    path,
    requestsPerSec: median(rps),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    detail: { aggregate: 'median', rounds, errorsTotal, requestsPerSecMin: Math.min(...rps), requestsPerSecMax: Math.max(...rps) },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** svc ÷ baseline per path: req/s above 1 means svc is faster; p50/p99 above 1 means svc is slower. */
function ratios(raw: Measurement[], base: Measurement[]): Ratio[] {
  const out: Ratio[] = [];
  for (const s of raw) {
    for (const b of base.filter((x) => x.path === s.path)) {
      out.push({
        name: `svc/${b.target}`,
        path: s.path,
        requestsPerSec: s.requestsPerSec / b.requestsPerSec,
        p50: s.p50Ms / b.p50Ms,
        p99: s.p99Ms / b.p99Ms,
      });
    }
  }
  return out;
}

export const scenario: Scenario = {
  name: 'http',
  description:
    'GET /healthz and /v1/server-info on svc over HTTPS vs a bare uWS handler and a bare node:https handler (wrk, same settings, ' +
    'same cert)',
  run,
};
