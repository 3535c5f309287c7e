/**
 * The general per-principal rate limiter on authenticated routes: a token bucket per actor, in
 * memory. Answers carry the IETF `RateLimit-Limit/-Remaining/-Reset` fields
 * (draft-ietf-httpapi-ratelimit-headers) and, when refused, `Retry-After` (RFC 9110 §10.2.3).
 */

export interface RateLimitOptions {
  /** sustained requests per second per principal; 0 turns the limiter off */
  ratePerSecond: number;
  /** bucket size: the burst a principal may send at once */
  burst: number;
  now?: () => number;
  maxKeys?: number;
}

/** Defaults, overridable by `SERVICE_RATE_LIMIT_RPS` and `SERVICE_RATE_LIMIT_BURST`. */
export const RATE_LIMIT_DEFAULTS = { ratePerSecond: 50, burst: 200 } as const;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the bucket is full again (allowed) or holds one token (refused) */
  resetSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets keyed by principal. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly opts: Required<RateLimitOptions>;

  constructor(opts: Partial<RateLimitOptions> = {}) {
    this.opts = { ...RATE_LIMIT_DEFAULTS, now: Date.now, maxKeys: 100_000, ...opts };
  }

  get enabled(): boolean {
    return this.opts.ratePerSecond > 0;
  }

  /** Take one token for `key`. */
  take(key: string): RateDecision {
    const { ratePerSecond: rate, burst } = this.opts;
    const now = this.opts.now();
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: burst, at: now };
      if (this.buckets.size >= this.opts.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * rate);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { allowed: true, limit: burst, remaining: Math.floor(b.tokens), resetSeconds: Math.ceil((burst - b.tokens) / rate) };
    }
    return { allowed: false, limit: burst, remaining: 0, resetSeconds: Math.max(1, Math.ceil((1 - b.tokens) / rate)) };
  }
}

/** The response header fields of a decision. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const h: Record<string, string> = {
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(d.resetSeconds),
  };
  if (!d.allowed) h['retry-after'] = String(d.resetSeconds);
  return h;
}
