/**
 * The built-in load generator of `svc bench` (issue 36): bounded, open-loop, coordinated-omission
 * aware. Requests are due at a fixed target rate (request i is due at t0 + i / rate); a fixed pool of
 * connections sends them, one in flight per connection. When the server falls behind, due requests
 * wait in the generator's queue, and their latency is counted from the time they were DUE, not from
 * when a connection was free to send them, so queueing delay shows in the percentiles instead of
 * being silently omitted (the coordinated-omission error of closed-loop tools). The service time
 * (from the actual send) is reported beside it.
 *
 * Bounded: sending stops at the end of the duration; requests still queued or in flight get a grace
 * period, and whatever is left after it is counted as `timedOut` with its age at the cut-off as a
 * lower bound of its latency (never dropped from the percentiles).
 */
import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher, type buildConnector } from 'undici';

export interface LoadRequest {
  method: Dispatcher.HttpMethod;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  /** scheme://host:port */
  origin: string;
  /** TLS/connect options or a connector (undici `connect`) */
  connect?: buildConnector.BuildOptions | buildConnector.connector;
  /** fixed number of connections (one request in flight on each) */
  connections: number;
  /** target rate, requests per second (open loop) */
  rate: number;
  durationMs: number;
  /** time allowed after the duration for queued and in-flight requests (default 5 s) */
  graceMs?: number;
  /** the i-th request (i from 0) */
  request(i: number): LoadRequest;
  /** called about once a second while the load runs */
  onProgress?(p: LoadProgress): void;
}

export interface LoadProgress {
  elapsedS: number;
  due: number;
  sent: number;
  completed: number;
  queued: number;
  errors: number;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadResult {
  targetRate: number;
  connections: number;
  durationS: number;
  /** requests that fell due during the duration (= rate × duration) */
  due: number;
  sent: number;
  completed: number;
  /** completed with a 2xx status */
  ok: number;
  non2xx: number;
  /** transport errors (refused, reset, timeouts of undici) */
  errors: number;
  /** due requests not completed at the end of the grace period */
  timedOut: number;
  /** 2xx answers per second over the measured window (first due time to last completion) */
  achievedRate: number;
  /** latency from the intended send time, ms (coordinated-omission corrected) */
  latencyMs: Percentiles;
  /** latency from the actual send, ms (what a closed-loop tool would report) */
  serviceMs: Percentiles;
  /** largest number of due requests waiting for a free connection */
  maxQueued: number;
  statusCounts: Record<string, number>;
  firstError?: string;
}

export const LIMITS = { maxRate: 200_000, maxDurationMs: 300_000, maxConnections: 1024 } as const;

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  if (!(o.rate > 0 && o.rate <= LIMITS.maxRate)) throw new RangeError(`rate must be in (0, ${LIMITS.maxRate}]`);
  if (!(o.durationMs > 0 && o.durationMs <= LIMITS.maxDurationMs))
    throw new RangeError(`duration must be in (0, ${LIMITS.maxDurationMs / 1000}s]`);
  if (!(Number.isInteger(o.connections) && o.connections >= 1 && o.connections <= LIMITS.maxConnections))
    throw new RangeError(`connections must be an integer in [1, ${LIMITS.maxConnections}]`);
  const graceMs = o.graceMs ?? 5_000;
  const pool = new Pool(o.origin, { connections: o.connections, pipelining: 1, ...(o.connect ? { connect: o.connect } : {}) });
  const intervalMs = 1000 / o.rate;
  const total = Math.max(1, Math.floor((o.rate * o.durationMs) / 1000));
  const latency: number[] = [];
  const service: number[] = [];
  const statusCounts: Record<string, number> = {};
  let next = 0; // next index to send
  let due = 0; // indices [0, due) have fallen due
  let inFlight = 0;
  let completed = 0;
  let ok = 0;
  let errors = 0;
  let maxQueued = 0;
  let lastCompletion = 0;
  let firstError: string | undefined;
  let cutOff = false;
  const pending = new Set<number>();
  const t0 = performance.now() + 5;

  let wake: (() => void) | undefined;
  const finished = new Promise<void>((resolve) => (wake = resolve));
  const checkDone = (): void => {
    if (completed + errors >= total && wake) wake();
  };

  const send = (i: number): void => {
    const intended = t0 + i * intervalMs;
    const req = o.request(i);
    inFlight++;
    pending.add(i);
    const sentAt = performance.now();
    pool
      .request({ method: req.method, path: req.path, headers: req.headers ?? {}, body: req.body ?? null })
      .then(async (res) => {
        await res.body.dump();
        const end = performance.now();
        if (cutOff) return;
        completed++;
        lastCompletion = end;
        latency.push(end - intended);
        service.push(end - sentAt);
        statusCounts[res.statusCode] = (statusCounts[res.statusCode] ?? 0) + 1;
        if (res.statusCode >= 200 && res.statusCode < 300) ok++;
      })
      .catch((err: unknown) => {
        if (cutOff) return;
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      })
      .finally(() => {
        inFlight--;
        pending.delete(i);
        pump();
        checkDone();
      });
  };

  const pump = (): void => {
    if (cutOff) return;
    while (inFlight < o.connections && next < due) send(next++);
    maxQueued = Math.max(maxQueued, due - next);
  };

  let lastProgress = t0;
  const tick = (): void => {
    if (cutOff) return;
    const now = performance.now();
    due = Math.min(total, Math.max(due, Math.floor((now - t0) / intervalMs) + 1));
    pump();
    if (o.onProgress && now - lastProgress >= 1000) {
      lastProgress = now;
      o.onProgress({ elapsedS: (now - t0) / 1000, due, sent: next, completed, queued: due - next, errors });
    }
    if (due < total) {
      // Sleep until the next request falls due (at most 10 ms, so progress stays live).
      const wait = Math.min(10, Math.max(0, t0 + due * intervalMs - performance.now()));
      setTimeout(tick, wait);
    }
  };
  setTimeout(tick, 5);

  const endAt = t0 + o.durationMs + graceMs;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, endAt - performance.now()))))]);
  clearTimeout(timer);
  cutOff = true;
  const cut = performance.now();
  // Anything not completed by the cut-off (still queued, or in flight) is counted with its age at the
  // cut-off as a lower bound of its latency: it stays in the percentiles.
  const outstanding = [...pending, ...Array.from({ length: Math.max(0, total - next) }, (_, k) => next + k)];
  for (const i of outstanding) latency.push(cut - (t0 + i * intervalMs));
  const timedOut = outstanding.length;
  await pool.destroy().catch(() => undefined);

  const windowS = Math.max(1e-3, ((lastCompletion || cut) - t0) / 1000);
  return {
    targetRate: o.rate,
    connections: o.connections,
    durationS: o.durationMs / 1000,
    due: total,
    sent: next,
    completed,
    ok,
    non2xx: completed - ok,
    errors,
    timedOut,
    achievedRate: ok / windowS,
    latencyMs: percentiles(latency),
    serviceMs: percentiles(service),
    maxQueued,
    statusCounts,
    ...(firstError ? { firstError } : {}),
  };
}

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const s = Float64Array.from(values).sort();
  const at = (q: number): number => round(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? 0);
  let sum = 0;
  for (const v of s) sum += v;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: round(s[s.length - 1] ?? 0), mean: round(sum / s.length) };
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
