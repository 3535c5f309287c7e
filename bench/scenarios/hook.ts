/**
 * Scenario `hook` (issue 47 item 4): what `svc claude-hook` costs an agent.
 *
 * 1. Per call, wall time of the whole hook process (start, read the hook JSON, one decision from a
 *    real `svc serve --seed-demo` over HTTPS with a pin, print, exit), `SVC_BENCH_HOOK_CALLS` calls
 *    (default 40), interleaved call by call with two baselines in the same run: `node -e 0` and a
 *    minimal Node script making the same HTTPS POST (node:https, no verification, no parsing).
 *    `NODE_EXTRA_CA_CERTS` is removed for all three (Node 20 loads that file at every start, ~45 ms
 *    here); when the run's environment had it, the hook is also measured with it.
 * 2. A real Claude Code session (`claude -p`, scripted model on loopback, `SVC_BENCH_HOOK_TOOLS`
 *    Bash calls, default 10) with the hook installed as `svc agent managed-settings` renders it,
 *    against the same session without hooks, `--rounds` times each, interleaved: the added time per
 *    tool call is (median with − median without) / tool calls. Each tool call runs the hook twice
 *    (PreToolUse and PostToolUse).
 */
import { spawn } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDemoSvc } from '../lib/demo.js';
import type { BenchContext, Measurement, Scenario, ScenarioResult } from '../lib/types.js';
import { hookCommand } from '../../src/cli/commands/agent/managed-settings.js';
import { runClaude, startMessagesApi } from '../../test/helpers/messages-api.js';

const HOOK_INPUT = JSON.stringify({
  hook_event_name: 'PreToolUse',
  session_id: 'bench',
  tool_name: 'Bash',
  tool_input: { command: 'git status' },
  cwd: '/tmp',
});

function timeProcess(argv: string[], env: NodeJS.ProcessEnv, input: string): Promise<{ ms: number; code: number | null; out: string }> {
  const started = process.hrtime.bigint();
  return new Promise((done, fail) => {
    const child = spawn(argv[0] as string, argv.slice(1), { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', fail);
    child.on('close', (code) => done({ ms: Number(process.hrtime.bigint() - started) / 1e6, code, out }));
    child.stdin.end(input);
  });
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] as number;
const median = (xs: number[]): number =>
  pct(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

function measurement(target: string, path: string, samples: number[]): Measurement {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return {
    target,
    path,
    requestsPerSec: 1000 / mean,
    p50Ms: pct(sorted, 0.5),
    p99Ms: pct(sorted, 0.99),
    detail: {
      samples: samples.length,
      meanMs: mean,
      minMs: sorted[0],
      maxMs: sorted[sorted.length - 1],
      allMs: samples.map((s) => +s.toFixed(2)),
    },
  };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const calls = Number(process.env.SVC_BENCH_HOOK_CALLS ?? 40);
  const tools = Number(process.env.SVC_BENCH_HOOK_TOOLS ?? 10);
  const notes: string[] = [];
  const demo = await startDemoSvc(ctx);
  try {
    await demo.call('POST', '/v1/m/governance/pdp/publish', { content: 'permit(principal, action, resource);', note: 'bench: allow all' });
    const tls = (await import('../../src/serve/tls.js')).loadOrCreateTls;
    const certPem = (await tls({ dataDir: join(ctx.tmpDir, 'svc-data'), hosts: ['127.0.0.1'] })).certPem;
    const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
    const pin = createHash('sha256').update(spki).digest('base64');
    const tokenFile = join(ctx.tmpDir, 'hook-token');
    writeFileSync(tokenFile, demo.token, { mode: 0o600 });
    const hookEnv: Record<string, string> = {
      SERVICE_HOOK_SERVER: demo.svc.url,
      SERVICE_HOOK_TOKEN_FILE: tokenFile,
      SERVICE_HOOK_PIN_SHA256: pin,
      SERVICE_HOOK_TIMEOUT: '10s',
    };
    const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: ctx.tmpDir, SERVICE_CONFIG: join(ctx.tmpDir, 'none.yaml') };
    const extraCa = process.env.NODE_EXTRA_CA_CERTS;
    const minimal = join(ctx.tmpDir, 'minimal-https.mjs');
    const url = new URL('/v1/m/governance/pep/decisions', demo.svc.url);
    writeFileSync(
      minimal,
      `import { request } from 'node:https';\n` +
        `const r = request({ host: ${JSON.stringify(url.hostname)}, port: ${url.port},` +
        ` path: ${JSON.stringify(url.pathname)}, method: 'POST',` +
        ` rejectUnauthorized: false, headers: { authorization: 'Bearer ${demo.token}', 'content-type': 'application/json' } },` +
        ` (res) => { let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => process.stdout.write(b)); });\n` +
        `r.end(${JSON.stringify(HOOK_INPUT)});\n`,
    );
    const svcJs = join(ctx.repoRoot, 'bin', 'svc.js');
    const series: Array<{ name: string; argv: string[]; env: NodeJS.ProcessEnv; samples: number[] }> = [
      { name: 'node -e 0', argv: [process.execPath, '-e', '0'], env: base, samples: [] },
      { name: 'minimal node https POST', argv: [process.execPath, minimal], env: base, samples: [] },
      { name: 'svc claude-hook', argv: [process.execPath, svcJs, 'claude-hook'], env: { ...base, ...hookEnv }, samples: [] },
    ];
    if (extraCa)
      series.push({
        name: 'svc claude-hook, NODE_EXTRA_CA_CERTS set',
        argv: [process.execPath, svcJs, 'claude-hook'],
        env: { ...base, ...hookEnv, NODE_EXTRA_CA_CERTS: extraCa },
        samples: [],
      });
    ctx.log(`per-call wall time: ${calls} calls of each of ${series.length} processes, interleaved`);
    for (let i = 0; i < calls + 3; i++)
      for (const s of series) {
        const r = await timeProcess(s.argv, s.env, HOOK_INPUT);
        if (s.name.startsWith('svc') && (r.code !== 0 || !r.out.includes('"allow"')))
          throw new Error(`the hook did not allow: ${r.code} ${r.out}`);
        if (i >= 3) s.samples.push(r.ms); // three warm-up calls (page cache) are not counted
      }
    const [nodeE0, minimalHttps, hook, hookExtra] = series.map((s) => measurement(s.name, 'per call, process start included', s.samples));

    ctx.log(`real Claude Code: ${ctx.options.rounds} sessions with and without the hook, ${tools} Bash calls each`);
    const settingsWith = {
      env: hookEnv,
      hooks: Object.fromEntries(
        ['PreToolUse', 'PostToolUse'].map((e) => [
          e,
          [{ matcher: '*', hooks: [{ type: 'command', command: hookCommand(['node', svcJs]), timeout: 15 }] }],
        ]),
      ),
    };
    const sessions: Record<'with' | 'without', number[]> = { with: [], without: [] };
    for (let round = 0; round < ctx.options.rounds; round++)
      for (const kind of round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
        const api = await startMessagesApi(
          Array.from({ length: tools }, (_, i) => ({ name: 'Bash', input: { command: `touch ran-${i}` } })),
        );
        try {
          const r = await runClaude(ctx.repoRoot, api, kind === 'with' ? settingsWith : {}, { env: { PATH: process.env.PATH ?? '' } });
          const ran = readdirSync(r.cwd).filter((f) => f.startsWith('ran-')).length;
          if (r.code !== 0 || ran !== tools) throw new Error(`claude (${kind} hook) exited ${r.code} and ran ${ran}/${tools} calls`);
          sessions[kind].push(r.elapsedMs);
        } finally {
          await api.close();
        }
      }
    const addedPerTool = (median(sessions.with) - median(sessions.without)) / tools;
    const session = (name: string, xs: number[]): Measurement => measurement(name, `claude -p session, ${tools} Bash calls`, xs);
    notes.push(
      `target: hook p99 ≤ 50 ms per call → ${(hook as Measurement).p99Ms <= 50 ? 'met' : 'NOT met'} ` +
        `(p50 ${(hook as Measurement).p50Ms.toFixed(1)} ms, ` +
        `p99 ${(hook as Measurement).p99Ms.toFixed(1)} ms; floor node -e 0 p50 ${(nodeE0 as Measurement).p50Ms.toFixed(1)} ms, ` +
        `minimal HTTPS p50 ${(minimalHttps as Measurement).p50Ms.toFixed(1)} ms)`,
      `real Claude Code: added ${addedPerTool.toFixed(1)} ms per tool call with the hook (PreToolUse + PostToolUse), ` +
        `session medians ${median(sessions.with).toFixed(0)} ms with, ${median(sessions.without).toFixed(0)} ms without`,
    );
    if (extraCa)
      notes.push(`NODE_EXTRA_CA_CERTS=${extraCa} in the run's environment: removed for the first three series, kept for the fourth`);
    const raw = [hook as Measurement, ...(hookExtra ? [hookExtra] : []), session('claude-code with hook', sessions.with)];
    const baselines = [nodeE0 as Measurement, minimalHttps as Measurement, session('claude-code without hook', sessions.without)];
    const ratio = (name: string, a: Measurement, b: Measurement) => ({
      name,
      path: a.path,
      requestsPerSec: a.requestsPerSec / b.requestsPerSec,
      p50: a.p50Ms / b.p50Ms,
      p99: a.p99Ms / b.p99Ms,
    });
    return {
      raw,
      baselines,
      ratios: [
        ratio('hook/node-e-0', hook as Measurement, nodeE0 as Measurement),
        ratio('hook/minimal-https', hook as Measurement, minimalHttps as Measurement),
        ratio('claude with/without hook', raw[raw.length - 1] as Measurement, baselines[2] as Measurement),
      ],
      subject: {
        command: demo.svc.args.join(' '),
        version: demo.svc.version,
        engine: demo.svc.engine,
        calls,
        tools,
        addedPerToolMs: addedPerTool,
      },
      notes,
    };
  } finally {
    await demo.stop();
  }
}

export const scenario: Scenario = {
  name: 'hook',
  description:
    'svc claude-hook per call (process start included) vs node -e 0 and a minimal HTTPS POST; real Claude Code with vs without the hook',
  run,
};
