import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Option } from 'clipanion';
import * as t from 'typanion';
import type { buildConnector } from 'undici';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { parseDuration } from '../../client/duration.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { LIMITS, runLoad, type LoadProgress, type LoadRequest, type LoadResult } from '../../../bench/loadgen.js';

/** Audited writes a `verify` or `export` run puts in the bench tenant's chain before the load. */
const SEED = 500;

/** Scenarios `svc bench` runs with its built-in load generator. */
export const BENCH_SCENARIOS = {
  http: 'GET /healthz: the bare request path (TLS, routing, access log)',
  whoami: 'GET /v1/auth/whoami with an API key: authentication on every request',
  'audited-write': 'POST /v1/agents: every 2xx is an agent row and a signed ledger record, durable',
  pep:
    'POST /v1/m/governance/pep/decisions: tool-call decisions (alternately scope-only Read and Cedar-evaluated Bash) under a 3-policy ' +
    'document, each with its signed ledger record',
  verify: `GET /v1/audit/verify: verification of the bench tenant's chain (seeded with ${SEED} audited writes first)`,
  export: `GET /v1/audit/export?format=ocsf: the bench tenant's chain streamed as OCSF (seeded with ${SEED} audited writes first)`,
} as const;
export type BenchScenario = keyof typeof BENCH_SCENARIOS;

/** The `svc bench <scenario> -o json` document. */
export type BenchReport = {
  scenario: BenchScenario;
  description: string;
  target: 'scratch' | 'server';
  server: string;
  date: string;
  machine: { cpuModel: string; cores: number; loadavg1mBefore: number; loadavg1mAfter: number; node: string };
  load: LoadResult;
  ledger?: { acknowledged: number; headSeqGrowth: number; complete: boolean };
  notes: string[];
};

/** Package root (this file compiles to dist/src/cli/commands/bench/). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../../../', import.meta.url)).replace(/\/$/, '');

/** `svc bench <scenario>`: measure this host or a deployment with the built-in load generator. */
export class BenchRunCommand extends ClientCommand {
  static override paths = [['bench']];

  static override usage = BaseCommand.Usage({
    category: 'Server',
    description: 'Measure a scratch server on this host (default) or a deployment with a bench tenant',
    details: `
      Scenarios: \`http\` (GET /healthz), \`whoami\` (GET /v1/auth/whoami with an API key),
      \`audited-write\` (POST /v1/agents; every 2xx is an agent row and a signed ledger record),
      \`pep\` (POST /v1/m/governance/pep/decisions after publishing a 3-policy document in the bench
      tenant; every 2xx decision has its ledger record), \`verify\` (GET /v1/audit/verify) and
      \`export\` (GET /v1/audit/export?format=ocsf) of the bench tenant's chain, seeded first with
      ${SEED} audited writes.

      By default a scratch \`svc serve --seed-demo\` is started on loopback in a temporary directory
      and removed afterwards. With \`--server\` the load goes to a running deployment: given a
      superadmin credential, svc bench creates an organization \`bench-<run>\` and an admin API key
      bound to it (1 h), runs the load with that key, then revokes the key and deletes the
      organization (\`--keep-tenant\` keeps both). Nothing is written in an existing tenant.

      The load generator is built in: open loop at \`--rate\` requests/s over \`--connections\` fixed
      connections for \`--duration\`, latency counted from when each request was due (queueing delay
      included, no coordinated omission), service time from the actual send beside it. Progress goes
      to stderr on a TTY; \`-o json\` prints one document; \`--report FILE.md\` writes a Markdown report.
      Exit 6 when the server cannot be reached or answers no request successfully.
    `,
    examples: [
      ['Two seconds of /healthz on a scratch server', '$0 bench http --duration 2s'],
      [
        'Audited writes against a deployment, in a bench tenant of its own',
        '$0 bench audited-write --server https://svc.example:8443 --token-file superadmin.token --rate 500',
      ],
    ],
  });

  scenario = Option.String({ name: 'scenario', required: true, validator: t.isEnum(Object.keys(BENCH_SCENARIOS) as BenchScenario[]) });
  duration = Option.String('--duration', '5s', { description: 'Measured time, e.g. 2s, 30s (max 300s)' });
  rate = Option.String('--rate', '2000', { description: 'Target rate in requests/s (open loop)', validator: t.isNumber() as never });
  connections = Option.String('--connections', '32', { description: 'Fixed number of connections' });
  reportFile = Option.String('--report', { description: 'Write a Markdown report to this file' });
  noAccessLog = Option.Boolean('--no-access-log', false, { description: 'Scratch server: start it with SERVICE_ACCESS_LOG=false' });
  keepTenant = Option.Boolean('--keep-tenant', false, { description: '--server: keep the bench tenant and its key after the run' });

  async execute(): Promise<number> {
    const durationMs = parseDuration(this.duration);
    if (durationMs === undefined || durationMs <= 0 || durationMs > LIMITS.maxDurationMs)
      throw new CliError(ExitCode.Usage, 'usage', `--duration must be a duration up to 300s, got ${JSON.stringify(this.duration)}`);
    const rate = Number(this.rate);
    if (!(rate > 0 && rate <= LIMITS.maxRate))
      throw new CliError(ExitCode.Usage, 'usage', `--rate must be a number in (0, ${LIMITS.maxRate}], got ${JSON.stringify(this.rate)}`);
    const connections = Number(this.connections);
    if (!Number.isInteger(connections) || connections < 1 || connections > LIMITS.maxConnections)
      throw new CliError(ExitCode.Usage, 'usage', `--connections must be an integer from 1 to ${LIMITS.maxConnections}`);
    const scenario = this.scenario as BenchScenario;
    const stderr = this.context.stderr;
    const tty = (stderr as { isTTY?: boolean }).isTTY === true;
    const log = (m: string): void => void stderr.write(`svc bench: ${m}\n`);
    const loadBefore = loadavg()[0] ?? 0;
    const notes: string[] = [];
    const runId0 = Date.now().toString(36);
    let target: Target;
    let tmpDir: string | undefined;
    let stopScratch: (() => Promise<void>) | undefined;
    if (this.server !== undefined) {
      target = await this.remoteTarget(scenario, runId0, notes, log);
    } else {
      tmpDir = await mkdtemp(join(tmpdir(), `svc-bench-${scenario}-`));
      const scratch = await startScratch(tmpDir, !this.noAccessLog, this.json ? () => undefined : log);
      target = scratch.target;
      stopScratch = scratch.stop;
      notes.push(
        'scratch server on this host: svc serve --seed-demo, SQLite (synchronous=FULL), HTTPS on loopback; the load generator shares ' +
          'the CPUs with it',
      );
    }
    let ok = false;
    try {
      await prepare(scenario, target, runId0);
      const headBefore = LEDGER_CHECKED.has(scenario) ? await target.headSeq() : 0;
      const runId = runId0;
      const request = await requestFor(scenario, target.token, runId, target.tenant);
      if (!this.json) log(`${scenario}: ${rate} req/s for ${durationMs / 1000}s over ${connections} connections against ${target.url}`);
      const load = await runLoad({
        origin: target.url,
        connect: target.connect,
        connections,
        rate,
        durationMs,
        request,
        onProgress: tty
          ? (p: LoadProgress) =>
              void stderr.write(
                `\r  ${p.elapsedS.toFixed(0)}s  sent ${p.sent}  done ${p.completed}  queued ${p.queued}  errors ${p.errors}   `,
              )
          : undefined,
      });
      if (tty) stderr.write('\n');
      const result: BenchReport = {
        scenario,
        description: BENCH_SCENARIOS[scenario],
        target: this.server !== undefined ? 'server' : 'scratch',
        server: target.url,
        date: new Date().toISOString(),
        machine: {
          cpuModel: cpus()[0]?.model ?? 'unknown',
          cores: cpus().length,
          loadavg1mBefore: loadBefore,
          loadavg1mAfter: loadavg()[0] ?? 0,
          node: process.version,
        },
        load,
        notes,
      };
      if (LEDGER_CHECKED.has(scenario)) {
        // The head_seq read appends its own audit.read record; it is not counted.
        const growth = (await target.headSeq()) - headBefore - 1;
        result.ledger = { acknowledged: load.ok, headSeqGrowth: growth, complete: growth >= load.ok };
        if (growth < load.ok) notes.push(`RECORDS MISSING: ${load.ok} writes acknowledged, head_seq grew by ${growth}`);
      }
      if (load.achievedRate < rate * 0.95)
        notes.push(
          `achieved ${load.achievedRate.toFixed(0)} of the ${rate} req/s asked: the server (or this host) is saturated; latency ` +
            `includes the queueing`,
        );
      if (load.timedOut > 0)
        notes.push(
          `${load.timedOut} requests were not answered within the 5 s grace after the run (counted in the latency as lower bounds)`,
        );
      if (loadBefore > cpus().length)
        notes.push(`load average ${loadBefore.toFixed(1)} on ${cpus().length} cores before the run: the figures are noisy`);
      if (this.reportFile !== undefined) await writeFile(this.reportFile, renderMarkdown(result));
      this.emit(result, renderText);
      ok = true;
      if (load.ok === 0)
        throw new CliError(
          ExitCode.Server,
          'no_success',
          `no request succeeded (${load.errors} transport errors${load.firstError ? `: ${load.firstError}` : ''}; statuses ` +
            `${JSON.stringify(load.statusCounts)})`,
        );
      if (result.ledger && !result.ledger.complete) return ExitCode.Err;
      return ExitCode.OK;
    } finally {
      await target.close();
      await stopScratch?.();
      if (tmpDir !== undefined) {
        if (ok) await rm(tmpDir, { recursive: true, force: true });
        else log(`scratch directory kept: ${tmpDir}`);
      }
    }
  }

  /**
   * A running deployment: with a superadmin's credential, svc bench creates an organization
   * `bench-<run>` of its own, an admin API key bound to it (1 h), runs the load with that key only,
   * then revokes the key and deletes the organization (`--keep-tenant` keeps both for a look).
   * Nothing is written in any existing tenant, so a production tenant is never touched.
   */
  private async remoteTarget(scenario: BenchScenario, runId: string, notes: string[], log: (m: string) => void): Promise<Target> {
    const settings = await this.settings();
    const { HttpClient } = await import('../../client/http-client.js');
    const { buildTrustedConnector } = await import('../../client/trust.js');
    const admin = new HttpClient(settings, { stderr: this.context.stderr, userAgent: 'svc-bench' });
    if (settings.token === undefined)
      throw new CliError(
        ExitCode.Usage,
        'usage',
        '--server needs a superadmin credential (--token or --token-file): svc bench creates and removes its own bench tenant',
      );
    const who = (await admin.get('/v1/auth/whoami')).body as { superadmin?: boolean; user_id?: string };
    if (who.superadmin !== true) {
      await admin.close();
      throw new CliError(
        ExitCode.Usage,
        'not_bench_tenant',
        'refusing to benchmark an existing tenant: give a superadmin credential, and svc bench creates a dedicated tenant ' +
          '(bench-<run>) for the run and removes it afterwards',
      );
    }
    const org = (await admin.request('POST', '/v1/system/orgs', { body: { name: `bench-${runId}` } })).body as { id: string; name: string };
    let keyId: string | undefined;
    const cleanup = async (): Promise<void> => {
      if (this.keepTenant) {
        notes.push(`bench tenant kept: ${org.name} (${org.id}); remove it with DELETE /v1/system/orgs/${org.id}`);
      } else {
        if (keyId !== undefined)
          await admin
            .request('DELETE', `/v1/tokens/${keyId}`)
            .catch((err: Error) => log(`could not revoke the bench key ${keyId}: ${err.message}`));
        await admin
          .request('DELETE', `/v1/system/orgs/${org.id}`)
          .catch((err: Error) => log(`could not delete the bench tenant ${org.id}: ${err.message}`));
      }
      await admin.close();
    };
    try {
      // The key acts through its owner's membership: the superadmin joins the bench tenant (only).
      const inBench = new HttpClient({ ...settings, tenant: org.id }, { stderr: this.context.stderr, userAgent: 'svc-bench' });
      await inBench.request('POST', '/v1/memberships', { body: { user_id: who.user_id, role: 'admin' } }).finally(() => inBench.close());
      const key = (
        await admin.request('POST', '/v1/tokens', { body: { name: `svc-bench-${runId}`, role: 'admin', tenant: org.id, ttl: '1h' } })
      ).body as { id: string; token: string };
      keyId = key.id;
      const bench = new HttpClient(
        { ...settings, token: key.token, tenant: org.id },
        { stderr: this.context.stderr, userAgent: 'svc-bench' },
      );
      notes.push(`bench tenant ${org.name} (${org.id}) created for the run${this.keepTenant ? '' : ' and removed after it'}`);
      return {
        url: settings.server.origin,
        token: key.token,
        tenant: org.id,
        connect: buildTrustedConnector(settings),
        headSeq: async () =>
          LEDGER_CHECKED.has(scenario)
            ? Number(((await bench.get('/v1/audit', { query: { limit: 1 } })).body as { head_seq?: unknown }).head_seq)
            : 0,
        post: async (path, body) => void (await bench.request('POST', path, { body })),
        close: async () => {
          await bench.close();
          await cleanup();
        },
      };
    } catch (err) {
      await cleanup();
      throw err;
    }
  }
}

interface Target {
  url: string;
  token: string;
  /** the tenant the load runs in, when the token alone does not say */
  tenant?: string;
  connect?: buildConnector.BuildOptions | buildConnector.connector;
  headSeq(): Promise<number>;
  /** a JSON POST with the target's token, in its tenant; rejects on an error status */
  post(path: string, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/** Scenarios whose every 2xx appends a ledger record: the head must grow by at least the 2xx count. */
const LEDGER_CHECKED: ReadonlySet<BenchScenario> = new Set(['audited-write', 'pep']);

/** What a scenario needs in the bench tenant before the load (nothing is written outside it). */
async function prepare(scenario: BenchScenario, target: Target, runId: string): Promise<void> {
  if (scenario === 'pep') {
    const { SMALL_POLICIES } = await import('../../../../bench/lib/pep-policies.js');
    await target.post('/v1/m/governance/pdp/publish', { content: SMALL_POLICIES, note: 'svc bench pep: 3 policies' });
  }
  if (scenario === 'verify' || scenario === 'export') {
    for (let i = 0; i < SEED; i += 16)
      await Promise.all(
        Array.from({ length: Math.min(16, SEED - i) }, (_, k) =>
          target.post('/v1/agents', { name: `bench-seed-${runId}-${i + k}`, kind: 'coding', labels: { team: 'bench' } }),
        ),
      );
  }
}

/** A scratch `svc serve --seed-demo` started by the benchmark harness's own helper (bench/lib/demo.ts). */
async function startScratch(
  tmpDir: string,
  accessLog: boolean,
  log: (m: string) => void,
): Promise<{ target: Target; stop: () => Promise<void> }> {
  const { startDemoSvc } = await import('../../../../bench/lib/demo.js');
  const { BenchRefusal } = await import('../../../../bench/lib/server.js');
  let demo;
  try {
    demo = await startDemoSvc({
      options: { duration: 0, rounds: 1, warmup: 0, threads: 1, connections: 1, insecure: false, accessLog, baselinesOnly: false },
      repoRoot: PACKAGE_ROOT,
      tmpDir,
      log,
    });
  } catch (err) {
    if (err instanceof BenchRefusal) throw new CliError(ExitCode.Err, 'fallback_engine', err.message);
    throw new CliError(ExitCode.Server, 'scratch_server', `could not start the scratch server: ${(err as Error).message}`);
  }
  const { readFile } = await import('node:fs/promises');
  const ca = await readFile(join(tmpDir, 'svc-data', 'tls', 'cert.pem'), 'utf8').catch(() => undefined);
  const running = demo;
  return {
    target: {
      url: running.svc.url,
      token: running.token,
      connect: { ...(ca ? { ca } : { rejectUnauthorized: false }), servername: 'localhost' },
      headSeq: async () => Number(((await running.call('GET', '/v1/audit?limit=1')) as { head_seq?: unknown }).head_seq),
      post: async (path, body) => void (await running.call('POST', path, body)),
      close: async () => undefined,
    },
    stop: () => running.stop(),
  };
}

async function requestFor(scenario: BenchScenario, token: string, runId: string, tenant?: string): Promise<(i: number) => LoadRequest> {
  const auth = { authorization: `Bearer ${token}`, ...(tenant !== undefined ? { 'x-service-tenant': tenant } : {}) };
  if (scenario === 'pep') {
    const { PEP_PATH, pepDecisionBody } = await import('../../../../bench/lib/pep-policies.js');
    return (i) => ({
      method: 'POST',
      path: PEP_PATH,
      headers: { ...auth, 'content-type': 'application/json' },
      body: pepDecisionBody(`bench-${runId}`, i),
    });
  }
  switch (scenario) {
    case 'http':
      return () => ({ method: 'GET', path: '/healthz' });
    case 'whoami':
      return () => ({ method: 'GET', path: '/v1/auth/whoami', headers: auth });
    case 'audited-write':
      return (i) => ({
        method: 'POST',
        path: '/v1/agents',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `bench-${runId}-${i}`, kind: 'coding', labels: { team: 'bench' } }),
      });
    case 'verify':
      return () => ({ method: 'GET', path: '/v1/audit/verify', headers: auth });
    case 'export':
      return () => ({ method: 'GET', path: '/v1/audit/export?format=ocsf', headers: auth });
  }
}

function renderText(r: BenchReport): string {
  const l = r.load;
  const lines = [
    `${r.scenario}: ${r.description}`,
    `target:     ${r.target} ${r.server}`,
    `load:       ${l.targetRate} req/s asked, ${l.connections} connections, ${l.durationS}s`,
    `achieved:   ${l.achievedRate.toFixed(1)} req/s (2xx ${l.ok}, other ${l.non2xx}, errors ${l.errors}, timed out ${l.timedOut})`,
    `latency:    p50 ${l.latencyMs.p50} ms  p90 ${l.latencyMs.p90} ms  p99 ${l.latencyMs.p99} ms  max ${l.latencyMs.max} ms  (from ` +
      `the intended send time)`,
    `service:    p50 ${l.serviceMs.p50} ms  p90 ${l.serviceMs.p90} ms  p99 ${l.serviceMs.p99} ms  max ${l.serviceMs.max} ms  (from ` +
      `the actual send)`,
  ];
  if (r.ledger)
    lines.push(
      `ledger:     ${r.ledger.acknowledged} acknowledged writes, head_seq +${r.ledger.headSeqGrowth} → ` +
        `${r.ledger.complete ? 'every write has its record' : 'RECORDS MISSING'}`,
    );
  lines.push(
    `machine:    ${r.machine.cores} × ${r.machine.cpuModel}, load ${r.machine.loadavg1mBefore.toFixed(2)} → ` +
      `${r.machine.loadavg1mAfter.toFixed(2)}, node ${r.machine.node}`,
  );
  for (const n of r.notes) lines.push(`note: ${n}`);
  return lines.join('\n');
}

/** The Markdown report of `--report FILE.md`. */
export function renderMarkdown(r: BenchReport): string {
  const l = r.load;
  const row = (name: string, p: LoadResult['latencyMs']): string => `| ${name} | ${p.p50} | ${p.p90} | ${p.p99} | ${p.max} | ${p.mean} |`;
  return [
    `# svc bench ${r.scenario}`,
    '',
    `${r.description}.`,
    '',
    `- Target: ${r.target} (${r.server})`,
    `- Date: ${r.date}`,
    `- Machine: ${r.machine.cores} × ${r.machine.cpuModel}, Node ${r.machine.node}, load average ` +
      `${r.machine.loadavg1mBefore.toFixed(2)} before, ${r.machine.loadavg1mAfter.toFixed(2)} after`,
    `- Load: open loop, ${l.targetRate} req/s asked over ${l.connections} connections for ${l.durationS} s (${l.due} requests due)`,
    '',
    '| Figure | Value |',
    '|---|---|',
    `| Achieved rate (2xx/s) | ${l.achievedRate.toFixed(1)} |`,
    `| 2xx | ${l.ok} |`,
    `| Other statuses | ${l.non2xx} |`,
    `| Transport errors | ${l.errors} |`,
    `| Not answered in time | ${l.timedOut} |`,
    `| Largest queue (due, not sent) | ${l.maxQueued} |`,
    ...(r.ledger
      ? [
          `| Ledger: acknowledged / head_seq growth | ${r.ledger.acknowledged} / ${r.ledger.headSeqGrowth} ` +
            `(${r.ledger.complete ? 'complete' : 'RECORDS MISSING'}) |`,
        ]
      : []),
    '',
    '| Latency (ms) | p50 | p90 | p99 | max | mean |',
    '|---|---|---|---|---|---|',
    row('from the intended send time', l.latencyMs),
    row('service time (from the actual send)', l.serviceMs),
    '',
    ...(r.notes.length > 0 ? ['Notes:', '', ...r.notes.map((n) => `- ${n}`), ''] : []),
  ].join('\n');
}
