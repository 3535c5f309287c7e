/**
 * Login lockout (DECISIONS.md): 5 failures within 15 minutes per account and per client IP lock
 * that key until the oldest failure leaves the window. While locked, even the right password is
 * refused, so a guesser learns nothing from further tries. In-memory: one process's view (see
 * docs/auth.md for several replicas).
 */

export interface LockoutOptions {
  maxFailures: number;
  windowMs: number;
  now?: () => number;
  /** keys tracked at most; the stalest are dropped first (bounded memory under a spray) */
  maxKeys?: number;
}

export const LOCKOUT_DEFAULTS = { maxFailures: 5, windowMs: 15 * 60_000 } as const;

/** Failure counters keyed by `account:<email>` and `ip:<address>`. */
export class LoginLockout {
  private readonly failures = new Map<string, number[]>();
  private readonly opts: Required<LockoutOptions>;

  constructor(opts: Partial<LockoutOptions> = {}) {
    this.opts = { ...LOCKOUT_DEFAULTS, now: Date.now, maxKeys: 100_000, ...opts };
  }

  /** Seconds until the first locked key unlocks, or 0 when none of `keys` is locked. */
  retryAfter(keys: readonly string[]): number {
    const now = this.opts.now();
    let wait = 0;
    for (const key of keys) {
      const times = this.recent(key, now);
      if (times.length >= this.opts.maxFailures) {
        const oldest = times[times.length - this.opts.maxFailures] as number;
        wait = Math.max(wait, Math.ceil((oldest + this.opts.windowMs - now) / 1000));
      }
    }
    return wait;
  }

  /** Count one failure against every key. */
  fail(keys: readonly string[]): void {
    const now = this.opts.now();
    for (const key of keys) {
      const times = this.recent(key, now);
      times.push(now);
      this.failures.delete(key);
      this.failures.set(key, times);
    }
    while (this.failures.size > this.opts.maxKeys) {
      const first = this.failures.keys().next().value as string;
      this.failures.delete(first);
    }
  }

  /** Forget the failures of `key` (an account after a successful login). */
  clear(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter((t) => now - t < this.opts.windowMs);
    if (times.length === 0) this.failures.delete(key);
    return times;
  }
}
