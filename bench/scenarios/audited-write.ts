/**
 * Scenario `audited-write` (issue 4, the end-to-end append figure): `POST /v1/agents` on a real
 * `svc serve` over HTTPS with 64 connections. Every answer 201 means an agent row committed and an
 * `agent.create` record durable in the signed ledger (SQLite, synchronous=FULL). Baseline in the same
 * run: `GET /healthz` of the same server with the same wrk settings. After the run the tenant's
 * ledger head is read back: every acknowledged write must have its record (the figure is only
 * reported when head_seq grew by at least the number of 201 answers).
 */
import { startDemoSvc } from '../lib/demo.js';
import type { BenchContext, Ratio, Scenario, ScenarioResult } from '../lib/types.js';
import { runWrk, summariseRounds, type WrkResult } from '../lib/wrk.js';

const PATH = '/v1/agents';
const HEALTHZ = '/healthz';

/** wrk Lua: unique agent names per request (thread id + counter) and the auth header; null = a plain GET. */
function luaScript(token: string | null): string {
  if (token === null) return '';
  return `
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("tid", threads) end
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"name":"bench-%d-%d","kind":"coding","labels":{"team":"bench"}}', tid or 0, n)
  return wrk.format("POST", "${PATH}", { ["Authorization"] = "Bearer ${token}", ["Content-Type"] = "application/json" }, body)
end`;
}

function wrk(ctx: BenchContext, url: string, durationS: number, token: string | null): Promise<WrkResult> {
  const o = ctx.options;
  return runWrk({
    url,
    threads: o.threads,
    connections: o.connections,
    durationS,
    scriptDir: ctx.tmpDir,
    lua: luaScript(token),
    scriptName: token === null ? 'healthz.lua' : 'write.lua',
  });
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const o = ctx.options;
  if (o.insecure || o.baselinesOnly)
    throw new Error('the audited-write scenario measures svc itself over HTTPS: --insecure and --baselines-only do not apply');
  const notes: string[] = [];
  const demo = await startDemoSvc(ctx);
  const svc = demo.svc;
  try {
    const token = demo.token;
    const headSeq = async (): Promise<number> => Number((await demo.call('GET', '/v1/audit?limit=1')).head_seq);

    const runs = new Map<string, WrkResult[]>();
    const head0 = await headSeq();
    let created = 0;
    for (let round = 0; round < o.rounds; round++) {
      for (const path of round % 2 === 0 ? [HEALTHZ, PATH] : [PATH, HEALTHZ]) {
        const tok = path === PATH ? token : null;
        if (round === 0 && o.warmup > 0) {
          const w = await wrk(ctx, `${svc.url}${path}`, o.warmup, tok);
          if (path === PATH) created += w.exact.requests - w.non2xx3xx;
        }
        ctx.log(`round ${round + 1}/${o.rounds}: ${path === PATH ? 'POST ' : 'GET '}${path} (${o.duration}s)`);
        const r = await wrk(ctx, `${svc.url}${path}`, o.duration, tok);
        if (path === PATH) created += r.exact.requests - r.non2xx3xx;
        runs.set(path, [...(runs.get(path) ?? []), r]);
      }
    }
    // Each headSeq read appends its own audit.read; the last one is not counted in what it reports.
    const grown = (await headSeq()) - head0 - 1;
    const write = summariseRounds(`POST ${PATH}`, runs.get(PATH) ?? []);
    const healthz = summariseRounds(HEALTHZ, runs.get(HEALTHZ) ?? []);
    for (const m of [write, healthz])
      if ((m.detail.errorsTotal as number) > 0) notes.push(`${m.path}: ${String(m.detail.errorsTotal)} errors or non-2xx answers`);
    notes.push(
      `ledger check: ${created} writes answered 2xx, the tenant's head_seq grew by ${grown} → ` +
        `${grown >= created ? 'every acknowledged write has its record' : 'RECORDS MISSING'}`,
    );
    if (grown < created) throw new Error(`ledger head grew by ${grown}, fewer than the ${created} acknowledged writes`);
    const ratio: Ratio = {
      name: 'audited-write/healthz',
      path: `POST ${PATH}`,
      requestsPerSec: write.requestsPerSec / healthz.requestsPerSec,
      p50: write.p50Ms / healthz.p50Ms,
      p99: write.p99Ms / healthz.p99Ms,
    };
    const met = ratio.requestsPerSec >= 0.4 ? 'met' : 'NOT met';
    notes.push(`target (issue 36): POST ${PATH} ≥ 0.4 × /healthz req/s → ${met} (${ratio.requestsPerSec.toFixed(2)})`);
    return {
      raw: [write],
      baselines: [healthz],
      ratios: [ratio],
      subject: {
        command: svc.args.join(' '),
        version: svc.version,
        engine: svc.engine,
        store: 'sqlite',
        sqlite_synchronous: 'full',
        acknowledged_writes: created,
        ledger_records_added: grown,
      },
      notes,
    };
  } finally {
    await demo.stop();
  }
}

export const scenario: Scenario = {
  name: 'audited-write',
  description:
    'POST /v1/agents over HTTPS with 64 connections: agent row + signed ledger record durable per 201, vs GET /healthz of the same server',
  run,
};
