/**
 * Scenario `pep` (issue 33): decisions/s through `POST /v1/m/governance/pep/decisions` over HTTPS
 * with 64 connections on a real `svc serve` (SQLite, synchronous=FULL); every 200 is a decision
 * whose `pep.decision` record is durable in the signed ledger. Baseline in the same run: `GET
 * /healthz` of the same server with the same wrk settings.
 *
 * Paths measured, interleaved per round:
 * - `read`: a tool whose policies are scope-only (decided without calling the Cedar engine);
 * - `bash`: a tool whose policies have conditions; the command differs in every request, so every
 *   decision is a Cedar evaluation (no memo hits). First against a 3-policy document, then (after a
 *   publish) against a 200-policy document over 40 tools, 5 conditional policies on Bash.
 * - `POST /v1/agents` (the audited REST write of `bench audited-write`), for comparison: the issue
 *   asks the decision path to do far better than it.
 * After the run the tenant's ledger head must have grown by at least the number of 2xx decisions.
 */
import { startDemoSvc } from '../lib/demo.js';
import { PEP_PATH, SMALL_POLICIES } from '../lib/pep-policies.js';
import type { BenchContext, Ratio, Scenario, ScenarioResult } from '../lib/types.js';
import { runWrk, summariseRounds, type WrkResult } from '../lib/wrk.js';

const PATH = PEP_PATH;
const HEALTHZ = '/healthz';
/** the audited REST write of `bench audited-write`, for comparison in the same run */
const WRITE = 'POST /v1/agents';

const SMALL = SMALL_POLICIES;

/** 200 policies: 5 per tool over 39 tools + Read (scope-only) + 4 more conditions on Bash. */
function large(): string {
  const out = [SMALL];
  for (let t = 0; t < 39; t++) {
    for (let i = 0; i < 5; i++)
      out.push(
        `@id("t${t}-${i}") ${i % 4 === 3 ? 'forbid' : 'permit'}(principal, action == Svc::Action::"PreToolUse", resource == ` +
          `Svc::Tool::"Tool${t}") when { context.tool_input has command && context.tool_input.command like "op${i} *" };`,
      );
  }
  for (let i = 0; i < 2; i++)
    out.push(
      `@id("bash-extra-${i}") forbid(principal, action, resource == Svc::Tool::"Bash") when { context.tool_input has command && ` +
        `context.tool_input.command like "*secret${i}*" };`,
    );
  return out.join('\n');
}

type Kind = 'healthz' | 'read' | 'bash' | 'write';

function lua(kind: Kind, token: string): string {
  if (kind === 'healthz') return '';
  if (kind === 'write') {
    return `
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("tid", threads) end
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"name":"bench-%d-%d","kind":"coding"}', tid or 0, n)
  return wrk.format("POST", "/v1/agents", { ["Authorization"] = "Bearer ${token}", ["Content-Type"] = "application/json" }, body)
end`;
  }
  const body =
    kind === 'read'
      ? `'{"hook_event_name":"PreToolUse","session_id":"bench-%d","tool_name":"Read","tool_input":{"file_path":"/src/file-%d.ts"}}'`
      : `'{"hook_event_name":"PreToolUse","session_id":"bench-%d","tool_name":"Bash","tool_input":{"command":"git status %d"}}'`;
  return `
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("tid", threads) end
local n = 0
request = function()
  n = n + 1
  local body = string.format(${body}, tid or 0, n)
  return wrk.format("POST", "${PATH}", { ["Authorization"] = "Bearer ${token}", ["Content-Type"] = "application/json" }, body)
end`;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const o = ctx.options;
  if (o.insecure || o.baselinesOnly)
    throw new Error('the pep scenario measures svc itself over HTTPS: --insecure and --baselines-only do not apply');
  const notes: string[] = [];
  const demo = await startDemoSvc(ctx);
  const svc = demo.svc;
  try {
    const token = demo.token;
    const headSeq = async (): Promise<number> => Number((await demo.call('GET', '/v1/audit?limit=1')).head_seq);
    const wrk = (kind: Kind, durationS: number): Promise<WrkResult> =>
      runWrk({
        url: `${svc.url}${kind === 'healthz' ? HEALTHZ : kind === 'write' ? '/v1/agents' : PATH}`,
        threads: o.threads,
        connections: o.connections,
        durationS,
        scriptDir: ctx.tmpDir,
        lua: lua(kind, token),
        scriptName: `${kind}.lua`,
      });
    const runs = new Map<string, WrkResult[]>();
    let decided = 0;
    const head0 = await headSeq();
    const phase = async (label: string, kinds: Kind[]): Promise<void> => {
      for (let round = 0; round < o.rounds; round++) {
        const order = round % 2 === 0 ? kinds : [...kinds].reverse();
        for (const kind of order) {
          const key = kind === 'healthz' ? HEALTHZ : kind === 'write' ? WRITE : `${label} ${kind}`;
          if (round === 0 && o.warmup > 0) {
            const w = await wrk(kind, o.warmup);
            if (kind !== 'healthz') decided += w.exact.requests - w.non2xx3xx; // an agent create appends one record too
          }
          ctx.log(`${label} round ${round + 1}/${o.rounds}: ${key} (${o.duration}s)`);
          const r = await wrk(kind, o.duration);
          if (kind !== 'healthz') decided += r.exact.requests - r.non2xx3xx;
          runs.set(key, [...(runs.get(key) ?? []), r]);
        }
      }
    };
    await demo.call('POST', '/v1/m/governance/pdp/publish', { content: SMALL, note: 'bench: 3 policies' });
    await phase('3 policies', ['healthz', 'write', 'read', 'bash']);
    const doc = large();
    const count = (doc.match(/^@id/gm) ?? []).length;
    await demo.call('POST', '/v1/m/governance/pdp/publish', { content: doc, note: `bench: ${count} policies` });
    await phase(`${count} policies`, ['read', 'bash']);
    const grown = (await headSeq()) - head0 - 1 - 2; // the last headSeq read and the two publishes
    notes.push(
      `ledger check: ${decided} decisions and agent writes answered 2xx, the tenant's head_seq grew by ${grown} → ` +
        `${grown >= decided ? 'every decision has its record' : 'RECORDS MISSING'}`,
    );
    if (grown < decided) throw new Error(`ledger head grew by ${grown}, fewer than the ${decided} decisions`);
    notes.push(
      `the ${count}-policy document spreads over 40 tools: a Bash decision evaluates the 4 policies whose scope can match Bash ` +
        `(policy-engine.ts slices); unsliced, one Cedar call over 200 policies costs ~1.7 ms in-process on this machine`,
    );
    notes.push('the machine is shared by several engineers: figures are noisy; compare ratios within one run');
    const healthz = summariseRounds(HEALTHZ, runs.get(HEALTHZ) ?? []);
    const raw = [...runs.keys()]
      .filter((k) => k !== HEALTHZ)
      .map((k) => summariseRounds(k === WRITE ? WRITE : `POST ${PATH} (${k})`, runs.get(k) ?? []));
    for (const m of [healthz, ...raw])
      if ((m.detail.errorsTotal as number) > 0) notes.push(`${m.path}: ${String(m.detail.errorsTotal)} errors or non-2xx answers`);
    const ratios: Ratio[] = raw.map((m) => ({
      name: `${m.path === WRITE ? 'audited-write' : m.path.replace(`POST ${PATH} `, 'pep ')}/healthz`,
      path: m.path,
      requestsPerSec: m.requestsPerSec / healthz.requestsPerSec,
      p50: m.p50Ms / healthz.p50Ms,
      p99: m.p99Ms / healthz.p99Ms,
    }));
    return {
      raw,
      baselines: [healthz],
      ratios,
      subject: {
        command: svc.args.join(' '),
        version: svc.version,
        engine: svc.engine,
        store: 'sqlite',
        sqlite_synchronous: 'full',
        decisions: decided,
        ledger_records_added: grown,
        large_policy_count: count,
      },
      notes,
    };
  } finally {
    await demo.stop();
  }
}

export const scenario: Scenario = {
  name: 'pep',
  description:
    'POST /v1/m/governance/pep/decisions over HTTPS with 64 connections (each decision a durable ledger record), 3- and 200-policy ' +
    'Cedar sets, vs GET /healthz of the same server',
  run,
};
