/**
 * Reconnect delays: exponential with full jitter (AWS Architecture Blog, "Exponential Backoff And
 * Jitter"): a random delay in [0, min(cap, base·2^attempt)], so many collectors that lost the same
 * core do not come back in lock-step.
 */

export interface BackoffOptions {
  baseMs: number;
  capMs: number;
  random?: () => number;
}

/** Delay sequence with full jitter; `reset()` after a success. */
export class Backoff {
  private attempt = 0;
  private readonly random: () => number;

  constructor(private readonly opts: BackoffOptions) {
    this.random = opts.random ?? Math.random;
  }

  /** The next delay in ms (grows until the cap). */
  next(): number {
    const ceiling = Math.min(this.opts.capMs, this.opts.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.floor(this.random() * ceiling);
  }

  /** Start again from the base delay. */
  reset(): void {
    this.attempt = 0;
  }

  /** How many delays were handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }
}
