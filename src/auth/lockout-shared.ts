/**
 * Login lockout shared by every replica on one PostgreSQL database (docs/scale-out.md): the same
 * rule as lockout.ts (5 failures within 15 minutes per account and per client IP), counted in
 * `login_failures` (migration 27), so a guesser gets five tries in the window for the deployment,
 * not five per replica. Keys are stored as SHA-256 of `account:<email>` / `ip:<address>`.
 */
import { createHash } from 'node:crypto';
import type { Store } from '../store/store-types.js';
import { LOCKOUT_DEFAULTS, type LockoutOptions } from './lockout.js';

const digest = (key: string): string => createHash('sha256').update(key).digest('hex');

/** The lockout both runtimes implement; the shared one answers asynchronously. */
export interface Lockout {
  retryAfter(keys: readonly string[]): number | Promise<number>;
  fail(keys: readonly string[]): void | Promise<void>;
  clear(key: string): void | Promise<void>;
}

export class SharedLoginLockout implements Lockout {
  private readonly opts: Required<Omit<LockoutOptions, 'maxKeys'>>;
  private lastSweep = 0;

  constructor(
    private readonly store: Store,
    opts: Partial<LockoutOptions> = {},
  ) {
    this.opts = { ...LOCKOUT_DEFAULTS, now: Date.now, ...opts };
  }

  async retryAfter(keys: readonly string[]): Promise<number> {
    const now = this.opts.now();
    const since = now - this.opts.windowMs;
    let wait = 0;
    const rows = await this.store.transaction((tx) =>
      tx
        .selectFrom('login_failures')
        .select(['key', 'at_ms'])
        .where('key', 'in', keys.map(digest))
        .where('at_ms', '>', since)
        .orderBy('at_ms', 'asc')
        .execute(),
    );
    for (const k of keys.map(digest)) {
      const times = rows.filter((r) => r.key === k).map((r) => Number(r.at_ms));
      if (times.length >= this.opts.maxFailures) {
        const oldest = times[times.length - this.opts.maxFailures] as number;
        wait = Math.max(wait, Math.ceil((oldest + this.opts.windowMs - now) / 1000));
      }
    }
    return wait;
  }

  async fail(keys: readonly string[]): Promise<void> {
    const now = this.opts.now();
    await this.store.transaction(async (tx) => {
      await tx.insertInto('login_failures').values(keys.map((k) => ({ key: digest(k), at_ms: now }))).execute();
      // Rows past the window count for nothing; swept at most once a minute per replica.
      if (now - this.lastSweep > 60_000) {
        this.lastSweep = now;
        await tx.deleteFrom('login_failures').where('at_ms', '<=', now - this.opts.windowMs).execute();
      }
    });
  }

  async clear(key: string): Promise<void> {
    await this.store.transaction((tx) => tx.deleteFrom('login_failures').where('key', '=', digest(key)).execute());
  }
}
