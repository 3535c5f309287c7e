/**
 * Scenario `whoami` (issue 3 Must show): authenticated `GET /v1/auth/whoami` with an API key on a
 * real `svc serve` over HTTPS, against the bare `/healthz` of the same server in the same run
 * (target, issue 36: whoami ≥ 0.9 of healthz req/s). The demo administrator (`--seed-demo`, loopback)
 * issues the key through the API. The rate limiter stays on, with limits far above the load,
 * so its cost is measured but it never answers 429.
 */
import { startDemoSvc } from '../lib/demo.js';
import type { BenchContext, Ratio, Scenario, ScenarioResult } from '../lib/types.js';
import { runWrk, summariseRounds, type WrkResult } from '../lib/wrk.js';

const WHOAMI = '/v1/auth/whoami';
const HEALTHZ = '/healthz';

/** wrk with request headers set through wrk's `wrk.headers` table. */
function wrk(ctx: BenchContext, url: string, durationS: number, headers: Record<string, string>): Promise<WrkResult> {
  const o = ctx.options;
  const lua = Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join('\n');
  return runWrk({
    url,
    threads: o.threads,
    connections: o.connections,
    durationS,
    scriptDir: ctx.tmpDir,
    lua,
    scriptName: `whoami-${Object.keys(headers).length}.lua`,
  });
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const o = ctx.options;
  if (o.insecure || o.baselinesOnly)
    throw new Error('the whoami scenario measures svc itself over HTTPS: --insecure and --baselines-only do not apply');
  const notes: string[] = [];
  const demo = await startDemoSvc(ctx);
  const svc = demo.svc;
  try {
    const auth = { Authorization: `Bearer ${demo.token}` };
    const who = (await demo.call('GET', WHOAMI)) as { kind?: string };
    if (who.kind !== 'token') throw new Error(`whoami with the API key answered kind ${String(who.kind)}`);

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
    const whoami = summariseRounds(WHOAMI, runs.get(WHOAMI) ?? []);
    const healthz = summariseRounds(HEALTHZ, runs.get(HEALTHZ) ?? []);
    for (const m of [whoami, healthz])
      if ((m.detail.errorsTotal as number) > 0) notes.push(`${m.path}: ${String(m.detail.errorsTotal)} errors or non-2xx answers`);
    const ratio: Ratio = {
      name: 'whoami/healthz',
      path: WHOAMI,
      requestsPerSec: whoami.requestsPerSec / healthz.requestsPerSec,
      p50: whoami.p50Ms / healthz.p50Ms,
      p99: whoami.p99Ms / healthz.p99Ms,
    };
    notes.push(
      `target: whoami ≥ 0.9 × healthz req/s → ${ratio.requestsPerSec >= 0.9 ? 'met' : 'NOT met'} (${ratio.requestsPerSec.toFixed(2)})`,
    );
    return {
      raw: [whoami],
      baselines: [healthz],
      ratios: [ratio],
      subject: {
        command: svc.args.join(' '),
        version: svc.version,
        engine: svc.engine,
        credential: 'API key (svck_)',
        rateLimiter: 'on, 10M rps',
      },
      notes,
    };
  } finally {
    await demo.stop();
  }
}

export const scenario: Scenario = {
  name: 'whoami',
  description: 'GET /v1/auth/whoami with an API key vs GET /healthz on the same svc over HTTPS (wrk, same settings, same run)',
  run,
};
