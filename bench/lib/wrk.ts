/**
 * Drives Debian's `wrk` (a C load generator, `apt-get install -y wrk`) and reads its figures two
 * ways: the `--latency` text block (req/s, p50, p99 as wrk prints them) and a Lua `done` hook that
 * emits exact microsecond percentiles and the error counters as one JSON line.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { track } from './child.js';
import type { Measurement } from './types.js';

export interface WrkOptions {
  url: string;
  threads: number;
  connections: number;
  durationS: number;
  /** per-request timeout; slower answers count as timeouts */
  timeoutS?: number;
  /** directory for the Lua script */
  scriptDir: string;
  /** Lua to run before the `done` hook (wrk.headers, request(), setup()); its script file is named by `scriptName` */
  lua?: string;
  scriptName?: string;
}

export interface WrkErrors {
  connect: number;
  read: number;
  write: number;
  /** HTTP status > 399 */
  status: number;
  timeout: number;
}

export interface WrkResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** from the Lua hook, microsecond resolution */
  exact: {
    requests: number;
    durationS: number;
    bytes: number;
    p50Ms: number;
    p90Ms: number;
    p99Ms: number;
    p999Ms: number;
    maxMs: number;
    meanMs: number;
  };
  errors: WrkErrors;
  /** "Non-2xx or 3xx responses" line, 0 when absent */
  non2xx3xx: number;
  command: string[];
  stdout: string;
}

/** Lua `done` hook (wrk's scripting API): summary counters and latency percentiles in µs. */
const LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"max":%d,"mean":%.3f,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.max, latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
`;

/** wrk's version line, or undefined when wrk is not installed. */
export async function wrkVersion(): Promise<string | undefined> {
  return new Promise((resolve) => {
    // `wrk -v` prints its banner and exits 1; the banner is what we want.
    execFile('wrk', ['-v'], { timeout: 5_000 }, (err, stdout, stderr) => {
      const text = `${stdout}${stderr}`.split('\n')[0]?.trim();
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') resolve(undefined);
      else resolve(text || undefined);
    });
  });
}

/** Run one bounded wrk load and parse it; rejects if wrk fails or prints nothing parseable. */
export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const script = join(o.scriptDir, o.scriptName ?? 'bench-latency.lua');
  // mode 0600: a script may carry a bearer token.
  await writeFile(script, `${o.lua ?? ''}\n${LUA}`, { mode: 0o600 });
  const args = [
    `-t${o.threads}`,
    `-c${o.connections}`,
    `-d${o.durationS}s`,
    `--timeout`,
    `${o.timeoutS ?? 5}s`,
    '--latency',
    '-s',
    script,
    o.url,
  ];
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile('wrk', args, { timeout: (o.durationS + 30) * 1000, maxBuffer: 4 * 1024 * 1024 }, (err, out, errOut) => {
      if (err) reject(new Error(`wrk ${args.join(' ')} failed: ${err.message}\n${errOut}`));
      else resolve(out);
    });
    track(child);
  });
  return { ...parseWrkOutput(stdout), command: ['wrk', ...args], stdout };
}

/** Parse `wrk --latency` text plus the WRK_JSON line of our Lua hook. */
export function parseWrkOutput(stdout: string): Omit<WrkResult, 'command' | 'stdout'> {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(stdout);
  const p50 = /^\s+50%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(stdout);
  const p99 = /^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(stdout);
  const json = /^WRK_JSON (\{.*\})\s*$/m.exec(stdout);
  if (!rps || !p50 || !p99 || !json) throw new Error(`cannot parse wrk output:\n${stdout}`);
  const j = JSON.parse(json[1] as string) as {
    requests: number;
    duration_us: number;
    bytes: number;
    errors: WrkErrors;
    latency_us: { min: number; max: number; mean: number; p50: number; p90: number; p99: number; p999: number };
  };
  const non2xx = /^\s*Non-2xx or 3xx responses:\s+(\d+)/m.exec(stdout);
  const ms = (us: number): number => us / 1000;
  return {
    requestsPerSec: Number(rps[1]),
    p50Ms: toMs(Number(p50[1]), p50[2] as string),
    p99Ms: toMs(Number(p99[1]), p99[2] as string),
    exact: {
      requests: j.requests,
      durationS: j.duration_us / 1e6,
      bytes: j.bytes,
      p50Ms: ms(j.latency_us.p50),
      p90Ms: ms(j.latency_us.p90),
      p99Ms: ms(j.latency_us.p99),
      p999Ms: ms(j.latency_us.p999),
      maxMs: ms(j.latency_us.max),
      meanMs: ms(j.latency_us.mean),
    },
    errors: j.errors,
    non2xx3xx: non2xx ? Number(non2xx[1]) : 0,
  };
}

/** wrk prints times with the unit that keeps the number short (src/units.c). */
function toMs(value: number, unit: string): number {
  switch (unit) {
    case 'us':
      return value / 1000;
    case 'ms':
      return value;
    case 's':
      return value * 1000;
    default:
      return value * 60_000;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Rounds of one target as a Measurement: the medians, every round in `detail`, and the error total. */
export function summariseRounds(path: string, rs: WrkResult[]): Measurement {
  const rounds = rs.map((r) => ({
    requestsPerSec: r.requestsPerSec,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    exact: r.exact,
    errors: r.errors,
    non2xx3xx: r.non2xx3xx,
    command: r.command.join(' '),
  }));
  const errorsTotal = rs.reduce(
    (n, r) => n + r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout + r.non2xx3xx,
    0,
  );
  return {
    target: 'svc',
    path,
    requestsPerSec: median(rs.map((r) => r.requestsPerSec)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    detail: { aggregate: 'median', rounds, errorsTotal },
  };
}
