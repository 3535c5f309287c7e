/**
 * The retry ladder (docs/eventing.md "Retries"): after failed attempt n (1-based) the next one is due
 * `initial × 2^(n-1)` later, capped at 8 hours, times a jitter factor drawn from [0.8, 1.2) so
 * receivers that failed together do not retry together. A `Retry-After` the receiver sent (seconds or
 * an HTTP date) replaces the ladder's delay, capped the same way.
 */

export const LADDER_CAP_MS = 8 * 3_600_000;

/** Delay in ms before the attempt after failed attempt `attempt` (1-based). */
export function retryDelayMs(attempt: number, initialIntervalS: number, retryAfterMs?: number, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) return Math.min(retryAfterMs, LADDER_CAP_MS);
  const base = Math.min(initialIntervalS * 1000 * 2 ** Math.min(attempt - 1, 30), LADDER_CAP_MS);
  return Math.round(Math.min(base * (0.8 + 0.4 * random()), LADDER_CAP_MS));
}

/** `Retry-After` as ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
