/**
 * The contract between the harness (bench/run.ts) and a scenario (bench/scenarios/<name>.ts):
 * a scenario measures, the harness records the machine, prints the table and writes the JSON.
 */

/** Options every scenario understands (`npm run bench -- <scenario> --duration 10 …`). */
export interface BenchOptions {
  /** seconds of measured load per run (one round of one target on one path) */
  duration: number;
  /** interleaved measurement rounds per target and path; figures are the median */
  rounds: number;
  /** seconds of unrecorded load before each run (JIT, TLS session caches, connection pools) */
  warmup: number;
  threads: number;
  connections: number;
  /** plain HTTP on loopback instead of HTTPS (svc `--insecure`, baselines without TLS) */
  insecure: boolean;
  /** svc's per-request access log (its default is on); off sets SERVICE_ACCESS_LOG=false */
  accessLog: boolean;
  /** measure only the baseline servers, for developing the harness without a working `svc serve` */
  baselinesOnly: boolean;
}

export interface BenchContext {
  options: BenchOptions;
  /** repository root (where bin/svc.js lives) */
  repoRoot: string;
  /** scratch directory, removed after the run */
  tmpDir: string;
  /** progress line on stderr (the table goes to stdout) */
  log(message: string): void;
}

/** One measured figure set (one target × one path). */
export interface Measurement {
  target: string;
  path: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** everything else the load generator reported */
  detail: Record<string, unknown>;
}

/** A ratio of svc to a baseline measured in the same run (>1 on req/s means svc is faster). */
export interface Ratio {
  name: string;
  path: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
}

export interface ScenarioResult {
  /** figures for the system under test */
  raw: Measurement[];
  /** figures for the reference servers */
  baselines: Measurement[];
  ratios: Ratio[];
  /** environment of the system under test (engine, version, TLS fingerprint …) */
  subject: Record<string, unknown>;
  notes: string[];
}

export interface Scenario {
  name: string;
  description: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}
