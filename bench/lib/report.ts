/** What every result file records about the run, and the human table. */
import { execFile } from 'node:child_process';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import type { Measurement, Ratio } from './types.js';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  loadavg1m: number;
  totalMemMiB: number;
  os: string;
  node: string;
}

/** CPU, cores, load and versions: the figures mean little without them. */
export function machineInfo(): MachineInfo {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    loadavg1m: Number((loadavg()[0] ?? 0).toFixed(2)),
    totalMemMiB: Math.round(totalmem() / 1048576),
    os: `${type()} ${release()}`,
    node: process.version,
  };
}

/** HEAD commit (null before the first commit) and whether the tree has uncommitted changes. */
export async function gitInfo(repoRoot: string): Promise<{ commit: string | null; dirty: boolean | null }> {
  const git = (args: string[]): Promise<string | null> =>
    new Promise((resolve) => execFile('git', args, { cwd: repoRoot, timeout: 5_000 }, (err, out) => resolve(err ? null : out.trim())));
  const commit = await git(['rev-parse', 'HEAD']);
  const status = await git(['status', '--porcelain', '--untracked-files=no']);
  // Before the first commit there is nothing to be dirty against.
  return { commit, dirty: commit === null || status === null ? null : status.length > 0 };
}

/** `YYYYMMDD-HHMMSS` in UTC, for result file names. */
export function stamp(d: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  const day = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}`;
  return `${day}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** Render measurements and ratios as aligned text tables. */
export function renderTables(measurements: Measurement[], ratios: Ratio[]): string {
  const rows: string[][] = [['target', 'path', 'req/s', 'req/s range', 'p50 ms', 'p99 ms', 'errors']];
  for (const m of measurements) {
    const errors = (m.detail.errorsTotal as number | undefined) ?? 0;
    const lo = m.detail.requestsPerSecMin as number | undefined;
    const hi = m.detail.requestsPerSecMax as number | undefined;
    const range = lo !== undefined && hi !== undefined ? `${fmt(lo, 0)}–${fmt(hi, 0)}` : '';
    rows.push([m.target, m.path, fmt(m.requestsPerSec, 0), range, fmt(m.p50Ms, 3), fmt(m.p99Ms, 3), String(errors)]);
  }
  let out = table(rows);
  if (ratios.length > 0) {
    const r: string[][] = [['ratio', 'path', 'req/s', 'p50', 'p99']];
    for (const x of ratios) r.push([x.name, x.path, fmt(x.requestsPerSec, 2), fmt(x.p50, 2), fmt(x.p99, 2)]);
    out += `\n${table(r)}`;
  }
  return out;
}

function fmt(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r, ri) => {
      const line = r.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
      return ri === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n')
    .concat('\n');
}
