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
import { LIMITS, runLoad, type LoadProgress, type LoadRequest } from '../../../bench/loadgen.js';
import type { IngestResult } from '../../../bench/ingest.js';
import { BENCH_SCENARIOS, renderMarkdown, renderText, SEED, type BenchReport, type BenchScenario } from './report.js';

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
      ${SEED} audited writes; \`ingest\` (gRPC Ingest/Push of edge observations, as collectors send
      them; \`--grpc host:port\` with \`--server\`) and \`ledger-append\` (the append pipeline in this
      process on a temporary SQLite file, or \`--store postgres --dsn …\`; no \`--server\` form).
      In this process too, on a temporary SQLite store, with no \`--server\` form: \`eventing\` (signed
      webhook deliveries through the delivery engine to 100 subscriptions on loopback receivers in a child
      process: bursts of \`--events\` events against a bare undici client, A B B A; latency paced at half
      that rate for \`--duration\`; a backlog of \`--backlog\` deliveries drained, with RSS) and
      \`forward\` (the ledger forwarder reading a signed ledger of \`--records\` records into the syslog
      connector over TLS to an in-process RFC 5425 receiver, against a bare tls.connect client writing
      the same framed bytes; runs alternate until \`--duration\` has passed).

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
  rate = Option.String('--rate', {
    description: 'Target rate, open loop: requests/s (default 2000); ingest: observations/s (default: closed loop)',
  });
  connections = Option.String('--connections', {
    description: 'Fixed number of connections (default 32); ingest: gRPC clients (default 16)',
  });
  reportFile = Option.String('--report', { description: 'Write a Markdown report to this file' });
  noAccessLog = Option.Boolean('--no-access-log', false, { description: 'Scratch server: start it with SERVICE_ACCESS_LOG=false' });
  keepTenant = Option.Boolean('--keep-tenant', false, { description: '--server: keep the bench tenant and its key after the run' });
  warmup = Option.String('--warmup', '1s', {
    description: 'ingest, ledger-append, forward: unrecorded load before the measured time; eventing: 0 skips its warm-up burst',
  });
  events = Option.String('--events', '200', { description: 'eventing: events per throughput burst (× 100 subscriptions)' });
  backlog = Option.String('--backlog', '10000', { description: 'eventing: deliveries queued, then drained (0: no backlog phase)' });
  records = Option.String('--records', '20000', { description: 'forward: records in the ledger forwarded in every run' });
  batch = Option.String('--batch', '500', { description: 'ingest: observations per batch' });
  window = Option.String('--window', '4', { description: 'ingest: batches unacknowledged per client at most' });
  grpc = Option.String('--grpc', { description: 'ingest with --server: the gRPC listener, host:port' });
  store = Option.String('--store', 'sqlite', {
    description: 'ledger-append: sqlite (a file in a temporary directory) or postgres (needs --dsn)',
    validator: t.isEnum(['sqlite', 'postgres'] as const),
  });
  dsn = Option.String('--dsn', { description: 'ledger-append --store postgres: admin DSN; a throwaway database is created on it' });

  async execute(): Promise<number> {
    const durationMs = parseDuration(this.duration);
    if (durationMs === undefined || durationMs <= 0 || durationMs > LIMITS.maxDurationMs)
      throw new CliError(ExitCode.Usage, 'usage', `--duration must be a duration up to 300s, got ${JSON.stringify(this.duration)}`);
    const warmupMs = /^0+(ms|s)?$/.test(this.warmup) ? 0 : parseDuration(this.warmup);
    if (warmupMs === undefined || warmupMs < 0 || warmupMs > 60_000)
      throw new CliError(ExitCode.Usage, 'usage', `--warmup must be a duration up to 60s, got ${JSON.stringify(this.warmup)}`);
    const scenario = this.scenario as BenchScenario;
    const ingest = scenario === 'ingest';
    const rate = Number(this.rate ?? (ingest ? 0 : 2000));
    if (!(rate > 0 && rate <= LIMITS.maxRate) && !(ingest && this.rate === undefined))
      throw new CliError(ExitCode.Usage, 'usage', `--rate must be a number in (0, ${LIMITS.maxRate}], got ${JSON.stringify(this.rate)}`);
    const connections = Number(this.connections ?? (ingest ? 16 : 32));
    const maxConnections = ingest ? INGEST_MAX_CLIENTS : LIMITS.maxConnections;
    if (!Number.isInteger(connections) || connections < 1 || connections > maxConnections)
      throw new CliError(ExitCode.Usage, 'usage', `--connections must be an integer from 1 to ${maxConnections}`);
    const stderr = this.context.stderr;
    const tty = (stderr as { isTTY?: boolean }).isTTY === true;
    const log = (m: string): void => void stderr.write(`svc bench: ${m}\n`);
    const progress = (line: string): void => void (tty && stderr.write(`\r  ${line}   `));
    const loadBefore = loadavg()[0] ?? 0;
    const notes: string[] = [];
    if (scenario === 'eventing' || scenario === 'forward') {
      const report = await this.inProcess(scenario, durationMs, warmupMs, loadBefore, notes, this.json ? () => undefined : log, progress);
      return this.finish(report, loadBefore, tty, true);
    }
    if (scenario === 'ledger-append') {
      const report = await this.ledgerAppend(durationMs, warmupMs, loadBefore, notes, this.json ? () => undefined : log, progress);
      return this.finish(report, loadBefore, tty, report.ledgerAppend?.chain.complete !== false);
    }
    const shape = ingest ? ingestShape(this.batch, this.window) : undefined;
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
        `scratch server on this host: svc serve --seed-demo, SQLite (synchronous=FULL), ${ingest ? 'gRPC over TLS' : 'HTTPS'} on ` +
          'loopback; the load generator shares the CPUs with it',
      );
    }
    let ok = false;
    try {
      await prepare(scenario, target, runId0);
      const headBefore = LEDGER_CHECKED.has(scenario) ? await target.headSeq() : 0;
      const runId = runId0;
      let report: BenchReport;
      let acknowledged: number;
      if (shape) {
        if (target.grpc === undefined)
          throw new CliError(ExitCode.Usage, 'usage', 'ingest with --server needs --grpc host:port (the gRPC listener of the deployment)');
        if (!this.json)
          log(
            `ingest: ${rate > 0 ? `${rate} observations/s` : 'closed loop'}, ${connections} clients, batches of ${shape.batch} ` +
              `against ${target.grpc.addr}; warm-up ${warmupMs / 1000}s, then ${durationMs / 1000}s`,
          );
        const { runIngest } = await import('../../../bench/ingest.js');
        const r = await runIngest({
          ...target.grpc,
          token: target.token,
          ...(target.tenant !== undefined ? { tenant: target.tenant } : {}),
          clients: connections,
          ...shape,
          rate,
          durationMs,
          warmupMs,
          runId,
          onProgress: (p) =>
            progress(`${p.elapsedS.toFixed(0)}s  batches due ${p.batchesDue}  acked ${p.batchesAcked}  backlog ${p.backlog}`),
        });
        report = this.buildReport(scenario, target.url, loadBefore, notes, { ingest: r }, ingestRaw(r));
        acknowledged = r.batchesAcked;
        if (r.ledgerRecords !== r.batchesAcked)
          notes.push(`${r.batchesAcked} batches acked but ${r.ledgerRecords} distinct ledger records named in the acks`);
        if (r.targetRate !== null && r.achievedRate < r.targetRate * 0.95)
          notes.push(
            `achieved ${r.achievedRate.toFixed(0)} of the ${r.targetRate} observations/s asked: the server (or this host) is saturated`,
          );
        if (r.timedOut > 0) notes.push(`${r.timedOut} batches were not acked within the 10 s grace after the run`);
        if (r.observations === 0)
          throw new CliError(ExitCode.Server, 'no_success', `no batch was acked${r.firstError ? `: ${r.firstError}` : ''}`);
      } else {
        const request = await requestFor(scenario, target.token, runId, target.tenant);
        if (!this.json) log(`${scenario}: ${rate} req/s for ${durationMs / 1000}s over ${connections} connections against ${target.url}`);
        const load = await runLoad({
          origin: target.url,
          connect: target.connect,
          connections,
          rate,
          durationMs,
          request,
          onProgress: (p: LoadProgress) =>
            progress(`${p.elapsedS.toFixed(0)}s  sent ${p.sent}  done ${p.completed}  queued ${p.queued}  errors ${p.errors}`),
        });
        report = this.buildReport(scenario, target.url, loadBefore, notes, { load }, [
          {
            target: 'svc',
            path: (await requestFor(scenario, target.token, runId, target.tenant))(0).path,
            requestsPerSec: Math.round(load.achievedRate),
            p50Ms: load.latencyMs.p50,
            p99Ms: load.latencyMs.p99,
            detail: { ok: load.ok, targetRate: load.targetRate, connections: load.connections, durationS: load.durationS },
          },
        ]);
        acknowledged = load.ok;
        if (load.achievedRate < rate * 0.95)
          notes.push(
            `achieved ${load.achievedRate.toFixed(0)} of the ${rate} req/s asked: the server (or this host) is saturated; latency ` +
              `includes the queueing`,
          );
        if (load.timedOut > 0)
          notes.push(
            `${load.timedOut} requests were not answered within the 5 s grace after the run (counted in the latency as lower bounds)`,
          );
        if (load.ok === 0) {
          await this.finish(report, loadBefore, tty, true);
          ok = true;
          throw new CliError(
            ExitCode.Server,
            'no_success',
            `no request succeeded (${load.errors} transport errors${load.firstError ? `: ${load.firstError}` : ''}; statuses ` +
              `${JSON.stringify(load.statusCounts)})`,
          );
        }
      }
      if (LEDGER_CHECKED.has(scenario)) {
        // The head_seq read appends its own audit.read record; it is not counted.
        const growth = (await target.headSeq()) - headBefore - 1;
        report.ledger = { acknowledged, headSeqGrowth: growth, complete: growth >= acknowledged };
        if (growth < acknowledged) notes.push(`RECORDS MISSING: ${acknowledged} writes acknowledged, head_seq grew by ${growth}`);
      }
      ok = true;
      return await this.finish(report, loadBefore, tty, report.ledger?.complete !== false);
    } finally {
      await target.close();
      await stopScratch?.();
      if (tmpDir !== undefined) {
        if (ok) await rm(tmpDir, { recursive: true, force: true });
        else log(`scratch directory kept: ${tmpDir}`);
      }
    }
  }

  /** Exit 2 for `--server` with a scenario that measures this process: `what` says what it measures and where to run it. */
  private refuseServer(scenario: string, what: string): void {
    if (this.server !== undefined) throw new CliError(ExitCode.Usage, 'usage', `${scenario} has no --server form: it measures ${what}`);
  }

  /** `ledger-append`: in this process, on this host; there is no deployment form. */
  private async ledgerAppend(
    durationMs: number,
    warmupMs: number,
    loadBefore: number,
    notes: string[],
    log: (m: string) => void,
    progress: (line: string) => void,
  ): Promise<BenchReport> {
    this.refuseServer(
      'ledger-append',
      'the ledger append pipeline in this process (keyring, signing pool, store) on this host; run it on the host you size, and add ' +
        '--store postgres --dsn … to measure a Postgres store',
    );
    if (this.store === 'postgres' && this.dsn === undefined)
      throw new CliError(ExitCode.Usage, 'usage', '--store postgres needs --dsn (an admin DSN: a throwaway database is created on it)');
    if (this.store === 'sqlite' && this.dsn !== undefined) throw new CliError(ExitCode.Usage, 'usage', '--dsn goes with --store postgres');
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-ledger-append-'));
    try {
      const { runLedgerAppend } = await import('../../../bench/ledger-append.js');
      log(`ledger-append: ${this.store}, warm-up ${warmupMs / 1000}s, then ${durationMs / 1000}s of 64 appenders in this process`);
      const r = await runLedgerAppend({
        dataDir,
        store: this.store,
        ...(this.dsn !== undefined ? { dsn: this.dsn } : {}),
        durationMs,
        warmupMs,
        onProgress: (p) => progress(`${p.elapsedS.toFixed(0)}s  appends ${p.appends}`),
      });
      notes.push(
        `in this process: keyring and ${this.store === 'sqlite' ? 'SQLite file (synchronous=FULL)' : 'throwaway Postgres database'} ` +
          `in a temporary directory, removed after the run; no server involved`,
      );
      if (!r.chain.complete)
        notes.push(
          `RECORDS MISSING: ${r.chain.acknowledged} appends acknowledged, ${r.chain.records} records, head_seq ${r.chain.headSeq}`,
        );
      return this.buildReport(
        'ledger-append',
        'this process',
        loadBefore,
        notes,
        { ledgerAppend: r },
        [
          {
            target: `svc-ledger-${r.store}`,
            path: 'append',
            requestsPerSec: Math.round(r.appendsPerSec),
            p50Ms: r.latencyMs.p50,
            p99Ms: r.latencyMs.p99,
            detail: {
              appends: r.appends,
              appenders: r.appenders,
              bytesPerRecord: r.bytesPerRecord,
              fileBytesPerRecord: r.fileBytesPerRecord,
            },
          },
        ],
        r.store === 'sqlite' ? { sqlite_bytes_per_record: r.bytesPerRecord } : { postgres_bytes_per_record: r.bytesPerRecord },
      );
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(ExitCode.Err, 'bench_failed', `ledger-append: ${(err as Error).message}`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  /** `eventing` and `forward`: in this process, on a scratch SQLite store in a temporary directory; no deployment form. */
  private async inProcess(
    scenario: 'eventing' | 'forward',
    durationMs: number,
    warmupMs: number,
    loadBefore: number,
    notes: string[],
    log: (m: string) => void,
    progress: (line: string) => void,
  ): Promise<BenchReport> {
    this.refuseServer(
      scenario,
      `${scenario === 'eventing' ? 'the webhook delivery engine' : 'the ledger forwarder'} in this process against a scratch SQLite ` +
        'store and loopback receivers; run it on the host you size',
    );
    const count = (name: string, value: string, min: number, max: number): number => {
      const v = Number(value);
      if (!Number.isInteger(v) || v < min || v > max)
        throw new CliError(ExitCode.Usage, 'usage', `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
      return v;
    };
    const dataDir = await mkdtemp(join(tmpdir(), `svc-bench-${scenario}-`));
    try {
      if (scenario === 'eventing') {
        const events = count('--events', this.events, 1, 100_000);
        const backlog = count('--backlog', this.backlog, 0, 10_000_000);
        const pacedSeconds = Math.max(1, Math.round(durationMs / 1000));
        const { runEventing } = await import('../../../bench/eventing.js');
        log(
          `eventing: bursts of ${events} events × 100 subscriptions, paced ${pacedSeconds}s` +
            `${backlog > 0 ? `, backlog ${backlog}` : ''}, in this process`,
        );
        const e = await runEventing({ dataDir, events, pacedSeconds, backlog, warmupEvents: warmupMs > 0 ? 10 : 0, log });
        notes.push(
          'in this process: delivery engine on a SQLite store (synchronous=FULL) in a temporary directory, removed after the run; ' +
            'receivers in a child process on loopback; no server involved',
        );
        if (e.svc.some((x) => x.n === 0)) throw new CliError(ExitCode.Err, 'bench_failed', 'eventing: no delivery was received');
        return this.buildReport(
          'eventing',
          'this process',
          loadBefore,
          notes,
          { eventing: e },
          [
            {
              target: 'svc-delivery-engine',
              path: 'burst drain (ABBA)',
              requestsPerSec: Math.round(e.svcRate),
              p50Ms: 0,
              p99Ms: 0,
              detail: { runs: e.svc, cpuMsPer1000: Number(e.svcCpuPer1k.toFixed(1)), ratioToBare: Number(e.ratio.toFixed(3)) },
            },
            {
              target: 'svc-delivery-engine',
              path: `paced ${e.pacedEventsPerSec * e.subscriptions}/s`,
              requestsPerSec: Math.round(e.paced.deliveriesPerSec),
              p50Ms: e.paced.p50,
              p99Ms: e.paced.p99,
              detail: { ...e.paced, eventsPerSec: e.pacedEventsPerSec, seconds: e.pacedSeconds },
            },
            ...(e.backlog
              ? [
                  {
                    target: 'svc-delivery-engine',
                    path: `backlog ${e.backlog.total}`,
                    requestsPerSec: Math.round(e.backlog.rate),
                    p50Ms: 0,
                    p99Ms: 0,
                    detail: e.backlog,
                  },
                ]
              : []),
          ],
          { subscriptions: e.subscriptions, events, backlog, sink_format: 'json', store: 'sqlite' },
        );
      }
      const records = count('--records', this.records, 1, 10_000_000);
      const { runForward } = await import('../../../bench/forward.js');
      log(`forward: ${records} records per run, warm-up ${warmupMs / 1000}s, then runs for ${durationMs / 1000}s, in this process`);
      const f = await runForward({
        dataDir,
        records,
        durationMs,
        warmupMs,
        log,
        onProgress: (p) => progress(`${p.elapsedS.toFixed(0)}s  rounds ${p.rounds}`),
      });
      notes.push(
        'in this process: a signed ledger in a SQLite file in a temporary directory (removed after the run), forwarded with the ' +
          'syslog connector over TLS to a loopback RFC 5425 receiver in this process (a throwaway self-signed certificate); the ' +
          'forwarder counts a batch once the kernel took its bytes, and every run waits until the receiver counted every record',
      );
      return this.buildReport(
        'forward',
        'this process',
        loadBefore,
        notes,
        { forward: f },
        [
          {
            target: 'forward-syslog-tls',
            path: `${records} records → TLS receiver (octet counting)`,
            requestsPerSec: f.forwardPerSec,
            p50Ms: 0,
            p99Ms: 0,
            detail: { rounds: f.forwardRates, ratioToBare: f.ratio, baseline: f.barePerSec },
          },
        ],
        { records, batch: f.batch, store: 'sqlite', syslog_format: 'syslog', bytes_per_run: f.bytesPerRun },
      );
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(ExitCode.Err, 'bench_failed', `${scenario}: ${(err as Error).message}`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  private buildReport(
    scenario: BenchScenario,
    server: string,
    loadBefore: number,
    notes: string[],
    figures: Pick<BenchReport, 'load' | 'ingest' | 'ledgerAppend' | 'eventing' | 'forward'>,
    raw: BenchReport['raw'],
    subject: Record<string, unknown> = {},
  ): BenchReport {
    return {
      scenario,
      description: BENCH_SCENARIOS[scenario],
      target: IN_PROCESS.has(scenario) ? 'in-process' : this.server !== undefined ? 'server' : 'scratch',
      server,
      date: new Date().toISOString(),
      machine: {
        cpuModel: cpus()[0]?.model ?? 'unknown',
        cores: cpus().length,
        loadavg1mBefore: loadBefore,
        loadavg1mAfter: 0,
        node: process.version,
      },
      ...figures,
      raw,
      subject,
      notes,
    };
  }

  /** Prints (and writes) the report; exit 1 when `complete` is false (a record is missing). */
  private async finish(report: BenchReport, loadBefore: number, tty: boolean, complete: boolean): Promise<number> {
    if (tty) this.context.stderr.write('\n');
    report.machine.loadavg1mAfter = loadavg()[0] ?? 0;
    if (loadBefore > cpus().length)
      report.notes.push(`load average ${loadBefore.toFixed(1)} on ${cpus().length} cores before the run: the figures are noisy`);
    if (this.reportFile !== undefined) await writeFile(this.reportFile, renderMarkdown(report));
    this.emit(report, renderText);
    return complete ? ExitCode.OK : ExitCode.Err;
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
    if (scenario === 'ingest' && (settings.pins.length > 0 || settings.insecure || this.grpc === undefined)) {
      await admin.close();
      throw new CliError(
        ExitCode.Usage,
        'usage',
        'ingest with --server needs --grpc host:port, and trusts the gRPC listener through the system roots or --ca-cert ' +
          '(not --pin-sha256 or --insecure)',
      );
    }
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
        ...(this.grpc !== undefined ? { grpc: { addr: this.grpc, ...(settings.caCertPem ? { ca: settings.caCertPem } : {}) } } : {}),
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
  /** the gRPC listener (ingest): address and TLS trust */
  grpc?: { addr: string; ca?: string; servername?: string };
  headSeq(): Promise<number>;
  /** a JSON POST with the target's token, in its tenant; rejects on an error status */
  post(path: string, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/** Scenarios whose every 2xx appends a ledger record: the head must grow by at least the 2xx count. */
const LEDGER_CHECKED: ReadonlySet<BenchScenario> = new Set(['audited-write', 'pep', 'ingest']);

/** Scenarios measured in this process, with no deployment form. */
const IN_PROCESS: ReadonlySet<BenchScenario> = new Set(['ledger-append', 'eventing', 'forward']);

/** gRPC clients `svc bench ingest` opens at most. */
const INGEST_MAX_CLIENTS = 256;

/** `--batch` and `--window` of `ingest`, checked. */
function ingestShape(batch: string, window: string): { batch: number; window: number } {
  const b = Number(batch);
  const w = Number(window);
  if (!Number.isInteger(b) || b < 1 || b > 5000) throw new CliError(ExitCode.Usage, 'usage', '--batch must be an integer from 1 to 5000');
  if (!Number.isInteger(w) || w < 1 || w > 64) throw new CliError(ExitCode.Usage, 'usage', '--window must be an integer from 1 to 64');
  return { batch: b, window: w };
}

/** The ingest figure in the result-file format of `npm run bench -- ingest` (what `svc bench plan` reads). */
function ingestRaw(r: IngestResult): BenchReport['raw'] {
  return [
    {
      target: 'svc-grpc-ingest',
      path: `Push (${r.clients} clients, batch ${r.batch}${r.targetRate !== null ? `, paced ${r.targetRate}/s` : ''})`,
      requestsPerSec: Math.round(r.achievedRate),
      p50Ms: r.ackLatencyMs.p50,
      p99Ms: r.ackLatencyMs.p99,
      detail: { observations: r.observations, batches: r.batchesAcked, window: r.window, offered: r.targetRate },
    },
  ];
}

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
      grpc: { addr: `127.0.0.1:${running.svc.grpcPort}`, ...(ca ? { ca } : {}) },
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
    default:
      throw new Error(`${scenario} is not an HTTP scenario`);
  }
}
