import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Option } from 'clipanion';
import { BaseCommand } from '../../client/base-command.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { figuresFrom, fmtBytes, MissingFigures, parseProfile, plan, type PlanAnswer, type ResultFile } from '../../../bench/plan.js';

/** The repository's (or installed package's) bench/results (this file compiles to dist/src/cli/commands/bench/). */
const DEFAULT_RESULTS = fileURLToPath(new URL('../../../../../bench/results/', import.meta.url));

/** `svc bench plan --profile FILE`: the sizing answer from the figures measured on this host. */
export class BenchPlanCommand extends BaseCommand {
  static override paths = [['bench', 'plan']];

  static override usage = BaseCommand.Usage({
    category: 'Server',
    description: 'Size a deployment from a profile and the benchmark figures measured on this host',
    details: `
      The profile (JSON or YAML) gives \`name\`, \`agents\`, \`collectors\`, \`observations_per_sec\`,
      \`edges\`, \`records_per_day\`, \`retention_days\`, \`exports_per_day\`, \`siem_forwarding\`
      (true/false), \`policy_decisions_per_sec\` and optionally \`peak_factor\` (default 3).

      Each figure is read from the newest result file that has it in \`--results\` (default: the
      package's bench/results): ingest, audited-write, pep, ledger-append, accessmap-layout, export,
      forward. \`npm run bench\` files (<scenario>-<stamp>.json) and \`svc bench -o json\` output saved as
      svc-bench-<scenario>-<stamp>.json both count; \`--result FILE\` adds one file whose figures win.
      The answer says whether one node with SQLite fits, the CPU share and headroom, memory, disk per
      day and for the retention, and otherwise Postgres with how many replicas; it lists which
      figures were measured (with their files) and what was extrapolated. See docs/sizing.md.

      Exit 8 (indeterminate) when a figure the profile needs was never measured; 2 on a bad profile.
    `,
    examples: [['The 5,000-agent example', '$0 bench plan --profile docs/sizing/enterprise-5k.yaml']],
  });

  profile = Option.String('--profile', { required: true, description: 'Profile file, JSON or YAML' });
  results = Option.String('--results', { description: 'Directory of result files (default: bench/results of the package)' });
  result = Option.Array('--result', [], {
    description: 'A result file (npm run bench, or svc bench -o json) to use beyond the directory; its figures win (repeatable)',
  });

  async execute(): Promise<number> {
    let text: string;
    try {
      text = await readFile(this.profile, 'utf8');
    } catch (err) {
      throw new CliError(ExitCode.Usage, 'usage', `cannot read the profile ${this.profile}: ${(err as Error).message}`);
    }
    const { parse } = await import('yaml');
    let profile;
    try {
      profile = parseProfile(parse(text));
    } catch (err) {
      throw new CliError(ExitCode.Usage, 'bad_profile', `${this.profile}: ${(err as Error).message}`);
    }
    const dir = this.results ?? DEFAULT_RESULTS;
    const latest = await allResults(dir, this.result);
    let answer: PlanAnswer;
    try {
      answer = plan(profile, figuresFrom(latest));
    } catch (err) {
      if (err instanceof MissingFigures) {
        throw new CliError(
          ExitCode.Indeterminate,
          'figures_missing',
          `${err.message} in ${dir}: run the benchmark scenario(s) that measure them on this host first (npm run bench -- <scenario>)`,
        );
      }
      throw err;
    }
    this.emit(answer, renderPlan);
    return ExitCode.OK;
  }
}

/**
 * Every result file in `dir` (`<scenario>-YYYYMMDD-HHMMSS.json` of `npm run bench`, or
 * `svc-bench-<scenario>-YYYYMMDD-HHMMSS.json` of `svc bench -o json`) then the `extra` files, by
 * scenario, oldest first: `figuresFrom` takes each figure from the newest file that has it.
 */
export async function allResults(dir: string, extra: string[] = []): Promise<Map<string, Array<{ file: string; result: ResultFile }>>> {
  const stamp = /-(\d{8}-\d{6})\.json$/;
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => stamp.test(f));
  } catch (err) {
    throw new CliError(ExitCode.Indeterminate, 'figures_missing', `cannot read the results directory ${dir}: ${(err as Error).message}`);
  }
  files.sort((a, b) => (stamp.exec(a)?.[1] ?? '').localeCompare(stamp.exec(b)?.[1] ?? '') || a.localeCompare(b));
  const out = new Map<string, Array<{ file: string; result: ResultFile }>>();
  const add = (scenario: string, file: string, result: ResultFile): void => {
    if (!Array.isArray(result.raw)) return;
    out.set(scenario, [...(out.get(scenario) ?? []), { file, result }]);
  };
  for (const f of files) {
    try {
      add(f.replace(stamp, '').replace(/^svc-bench-/, ''), f, JSON.parse(await readFile(join(dir, f), 'utf8')) as ResultFile);
    } catch {
      // not a result file
    }
  }
  for (const path of extra) {
    let result: ResultFile;
    try {
      result = JSON.parse(await readFile(path, 'utf8')) as ResultFile;
    } catch (err) {
      throw new CliError(ExitCode.Usage, 'usage', `--result ${path}: not a result file (${(err as Error).message})`);
    }
    if (!Array.isArray(result.raw) || typeof result.scenario !== 'string')
      throw new CliError(ExitCode.Usage, 'usage', `--result ${path}: not a result file of npm run bench or svc bench -o json`);
    add(result.scenario, basename(path), result);
  }
  return out;
}

function renderPlan(a: PlanAnswer): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
  const lines = [
    `profile:        ${a.profile.name}`,
    `answer:         ${a.fits_one_node_sqlite ? 'fits on one node with SQLite' : `Postgres, ${a.nodes} API replicas`}`,
    `CPU at peak:    ${pct(a.cpu.utilisation)} of this host (headroom ${pct(a.cpu.headroom)}); ${Object.entries(a.cpu.breakdown)
      .filter(([, x]) => x > 0)
      .map(([k, x]) => `${k} ${pct(x)}`)
      .join(', ')}`,
    `ledger:         ${a.ledger.appends_per_sec_peak} appends/s at peak = ${pct(a.ledger.sqlite_single_writer_share)} of SQLite's ` +
      `single writer`,
    `memory:         ${a.memory_mib} MiB`,
    `disk:           ${fmtBytes(a.disk.bytes_per_day)}/day of ledger; ${fmtBytes(a.disk.ledger_bytes_retention)} for ` +
      `${a.profile.retention_days} days + ${fmtBytes(a.disk.accessmap_bytes)} access map = ${fmtBytes(a.disk.total_bytes_retention)}`,
    ...a.reasons.map((r) => `why:            ${r}`),
    'measured:',
    ...a.measured.map((m) => `  ${m}`),
    'extrapolated:',
    ...a.extrapolated.map((m) => `  ${m}`),
  ];
  return lines.join('\n');
}
