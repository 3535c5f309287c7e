import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
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

      The figures are read from the latest result file of each scenario in \`--results\` (default: the
      package's bench/results): ingest, audited-write, pep, ledger-append, accessmap-layout, export.
      The answer says whether one node with SQLite fits, the CPU share and headroom, memory, disk per
      day and for the retention, and otherwise Postgres with how many replicas; it lists which
      figures were measured (with their files) and what was extrapolated. See docs/sizing.md.

      Exit 8 (indeterminate) when a figure the profile needs was never measured; 2 on a bad profile.
    `,
    examples: [['The 5,000-agent example', '$0 bench plan --profile docs/sizing/enterprise-5k.yaml']],
  });

  profile = Option.String('--profile', { required: true, description: 'Profile file, JSON or YAML' });
  results = Option.String('--results', { description: 'Directory of result files (default: bench/results of the package)' });

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
    const latest = await latestResults(dir);
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

/** The newest result file of each scenario (file names end in -YYYYMMDD-HHMMSS.json). */
export async function latestResults(dir: string): Promise<Map<string, { file: string; result: ResultFile }>> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => /-\d{8}-\d{6}\.json$/.test(f)).sort();
  } catch (err) {
    throw new CliError(ExitCode.Indeterminate, 'figures_missing', `cannot read the results directory ${dir}: ${(err as Error).message}`);
  }
  const out = new Map<string, { file: string; result: ResultFile }>();
  for (const f of files) {
    const scenario = f.replace(/-\d{8}-\d{6}\.json$/, '');
    try {
      const result = JSON.parse(await readFile(join(dir, f), 'utf8')) as ResultFile;
      if (Array.isArray(result.raw)) out.set(scenario, { file: f, result });
    } catch {
      // not a result file
    }
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
