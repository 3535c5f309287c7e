/**
 * Benchmark harness entry: `npm run bench -- <scenario> [options]` (= `node dist/bench/run.js`).
 * Runs one scenario from bench/scenarios/, prints its table and writes
 * bench/results/<scenario>-<YYYYMMDD-HHMMSS>.json with the machine, the commit and the command.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { killTracked } from './lib/child.js';
import { gitInfo, machineInfo, renderTables, stamp } from './lib/report.js';
import { BenchRefusal } from './lib/server.js';
import type { BenchOptions, Scenario } from './lib/types.js';
import { wrkVersion } from './lib/wrk.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const scenarioDir = fileURLToPath(new URL('./scenarios/', import.meta.url));

const USAGE = `usage: npm run bench -- <scenario> [options]

options:
  --duration <s>      measured seconds per run (default 5, max 60)
  --rounds <n>        interleaved rounds, median reported (default 3)
  --warmup <s>        unrecorded warm-up seconds per run (default 2)
  --threads <n>       wrk threads (default 2)
  --connections <n>   wrk connections (default 64)
  --insecure          plain HTTP on loopback instead of HTTPS
  --no-access-log     start svc with SERVICE_ACCESS_LOG=false (default: svc's default, on)
  --baselines-only    measure only the baseline servers (no svc, no ratios)
  --out <dir>         results directory (default bench/results)
  --no-save           print only, write no result file
  --list              list scenarios
`;

/** Scenario names compiled into dist/bench/scenarios. */
async function listScenarios(): Promise<string[]> {
  const files = await readdir(scenarioDir).catch(() => [] as string[]);
  return files.filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3)).sort();
}

async function loadScenario(name: string): Promise<Scenario> {
  const known = await listScenarios();
  if (!/^[a-z0-9-]+$/.test(name) || !known.includes(name)) {
    throw new UsageError(
      `unknown scenario ${JSON.stringify(name)}; known: ${known.join(', ') || '(none built: run npx tsc -p tsconfig.json)'}`,
    );
  }
  const mod = (await import(`./scenarios/${name}.js`)) as { scenario?: Scenario };
  if (!mod.scenario || typeof mod.scenario.run !== 'function') throw new Error(`bench/scenarios/${name}.ts does not export \`scenario\``);
  return mod.scenario;
}

class UsageError extends Error {}

function intOption(value: string | undefined, flag: string, def: number, min: number, max: number): number {
  if (value === undefined) return def;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      threads: { type: 'string' },
      connections: { type: 'string' },
      insecure: { type: 'boolean', default: false },
      'baselines-only': { type: 'boolean', default: false },
      'no-access-log': { type: 'boolean', default: false },
      out: { type: 'string' },
      'no-save': { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.list) {
    for (const name of await listScenarios()) process.stdout.write(`${name}\t${(await loadScenario(name)).description}\n`);
    return 0;
  }
  const name = positionals[0];
  if (name === undefined || positionals.length > 1) throw new UsageError(`expected exactly one scenario\n\n${USAGE}`);
  const threads = intOption(values.threads, '--threads', 2, 1, 64);
  const options: BenchOptions = {
    duration: intOption(values.duration, '--duration', 5, 1, 60),
    rounds: intOption(values.rounds, '--rounds', 3, 1, 20),
    warmup: intOption(values.warmup, '--warmup', 2, 0, 30),
    threads,
    connections: intOption(values.connections, '--connections', 64, threads, 4096),
    insecure: values.insecure,
    accessLog: !values['no-access-log'],
    baselinesOnly: values['baselines-only'],
  };
  const scenario = await loadScenario(name);
  const wrk = await wrkVersion();
  if (!wrk) throw new UsageError('wrk is not installed: apt-get install -y --no-install-recommends wrk');

  const tmpDir = await mkdtemp(join(tmpdir(), `svc-bench-${name}-`));
  const log = (m: string): void => void process.stderr.write(`[bench ${name}] ${m}\n`);
  const startedAt = new Date();
  const machineBefore = machineInfo();
  const git = await gitInfo(repoRoot);
  let ok = false;
  try {
    log(
      `${options.rounds} round(s) of ${options.duration}s, warm-up ${options.warmup}s, wrk -t${options.threads} ` +
        `-c${options.connections}; scratch ${tmpDir}`,
    );
    const result = await scenario.run({ options, repoRoot, tmpDir, log });
    const finishedAt = new Date();
    process.stdout.write(`\n${scenario.name}: ${scenario.description}\n\n`);
    process.stdout.write(renderTables([...result.raw, ...result.baselines], result.ratios));
    for (const n of result.notes) process.stdout.write(`note: ${n}\n`);

    // The settings that shape a run travel in the environment (sizes, backend, the store's own
    // knobs), so the command to reproduce it names them; DSNs, credentials and key settings stay out,
    // and so does SVC_BENCH_KEEP_SCRATCH (it shapes no figure, and a copied command would leave
    // gigabytes of scratch behind).
    const settings = Object.keys(process.env)
      .filter((k) => /^(SVC_BENCH_|SERVICE_)/.test(k) && !/DSN|URL|PASSWORD|SECRET|TOKEN|KEY/.test(k) && k !== 'SVC_BENCH_KEEP_SCRATCH')
      .sort()
      .map((k) => `${k}=${shellWord(process.env[k] ?? '')}`);
    const command = [...settings, `npm run bench -- ${argv.join(' ')}`.trim()].join(' ');
    const record = {
      scenario: scenario.name,
      description: scenario.description,
      command,
      argv: process.argv,
      git,
      node: process.version,
      cpuModel: machineBefore.cpuModel,
      cores: machineBefore.cores,
      machine: { ...machineBefore, loadavg1mAfter: machineInfo().loadavg1m },
      wrk,
      date: startedAt.toISOString(),
      elapsedS: Number(((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(1)),
      options,
      subject: result.subject,
      raw: result.raw,
      baselines: result.baselines,
      ratios: result.ratios,
      notes: result.notes,
    };
    if (!values['no-save']) {
      const outDir = values.out ?? join(repoRoot, 'bench', 'results');
      await mkdir(outDir, { recursive: true });
      const file = join(outDir, `${scenario.name}-${stamp(startedAt)}.json`);
      await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
      process.stdout.write(`\nresults: ${relative(process.cwd(), file) || file}\nreproduce: ${command}\n`);
    }
    ok = true;
    return 0;
  } finally {
    // Keep the scratch directory (svc log, certificate, a generated database) when something went
    // wrong, or when asked to (SVC_BENCH_KEEP_SCRATCH=1: profile reads on the estate a run built).
    if (ok && process.env.SVC_BENCH_KEEP_SCRATCH !== '1') await rm(tmpDir, { recursive: true, force: true });
    else log(`scratch directory kept for inspection: ${tmpDir}`);
  }
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killTracked();
    process.exit(130);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    killTracked();
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof BenchRefusal) {
      process.stderr.write(`bench: ${err.message}\n`);
      process.exitCode = 3;
    } else {
      process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    }
  },
);

/** `v` as one POSIX shell word: bare when it is plainly safe, else single-quoted. */
function shellWord(v: string): string {
  return /^[\w.,:/@%+=-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}
