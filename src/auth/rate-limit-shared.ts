/**
 * The per-principal rate limit shared by every replica on one PostgreSQL database
 * (docs/scale-out.md): one token bucket per principal for the deployment, in `rate_limit_buckets`
 * (migration 31), refilled on the database's clock. A replica does not ask the database per
 * request: it reserves tokens from the shared bucket in chunks, spends them locally, and reserves
 * the next chunk in the background when half of one is left. Every admitted request spent a token
 * taken from the shared bucket, so over any interval T the deployment admits at most
 * `burst + rate × T + replicas × 1.5 × chunk`. Tokens a replica holds unspent for LEASE_MS go back
 * to the bucket with its next reservation, so an idle replica does not hoard them. When the shared
 * bucket is empty a replica refuses locally until it holds a token again by the rate, so refused
 * requests cost no database round trip. If the database fails, the replica falls back to its own
 * in-memory bucket (rate-limit.ts) until it answers again.
 */
import { sql } from 'kysely';
import type { Store } from '../store/store-types.js';
import { RATE_LIMIT_DEFAULTS, RateLimiter, type RateDecision, type RateLimitOptions } from './rate-limit.js';

/** How long reserved, unspent tokens stay this replica's before they are handed back. */
export const RESERVATION_LEASE_MS = 1000;

/** What the authenticator needs of a limiter; the in-memory one answers synchronously. */
export interface Limiter {
  readonly enabled: boolean;
  take(key: string): RateDecision | Promise<RateDecision>;
}

/** Tokens per reservation: a tenth of a second of the rate, at most an eighth of the burst, at least one. */
export function reservationChunk(ratePerSecond: number, burst: number): number {
  return Math.max(1, Math.min(Math.ceil(ratePerSecond / 10), Math.floor(burst / 8)));
}

interface Held {
  /** reserved from the shared bucket, not yet spent */
  tokens: number;
  /** local clock: when unspent tokens are handed back */
  until: number;
  /** expired tokens to hand back with the next reservation */
  owed: number;
  /** the shared bucket's tokens after the last reservation */
  shared: number;
  /** the shared bucket held no whole token: refuse locally until this local time */
  emptyUntil: number;
  pending?: Promise<void>;
}

export interface SharedRateLimitOptions extends Partial<RateLimitOptions> {
  /** a reservation failed (database unreachable…); the in-memory fallback answers meanwhile */
  onError?: (err: unknown) => void;
}

export class SharedRateLimiter implements Limiter {
  private readonly rate: number;
  private readonly burst: number;
  private readonly chunk: number;
  private readonly now: () => number;
  private readonly maxKeys: number;
  private readonly held = new Map<string, Held>();
  private readonly fallback: RateLimiter;
  private readonly onError: (err: unknown) => void;
  private lastSweep = 0;

  constructor(
    private readonly store: Store,
    opts: SharedRateLimitOptions = {},
  ) {
    this.rate = opts.ratePerSecond ?? RATE_LIMIT_DEFAULTS.ratePerSecond;
    this.burst = Math.max(1, opts.burst ?? RATE_LIMIT_DEFAULTS.burst);
    this.chunk = reservationChunk(this.rate, this.burst);
    this.now = opts.now ?? Date.now;
    this.maxKeys = opts.maxKeys ?? 100_000;
    this.fallback = new RateLimiter(opts);
    this.onError = opts.onError ?? (() => undefined);
  }

  get enabled(): boolean {
    return this.rate > 0;
  }

  /** Take one token for `key`: synchronous while this replica holds one, else one reservation round trip. */
  take(key: string): RateDecision | Promise<RateDecision> {
    const now = this.now();
    const h = this.local(key, now);
    if (h.tokens >= 1) return this.spend(key, h);
    if (now < h.emptyUntil) return this.refused(h, now);
    return this.wait(key, h);
  }

  private local(key: string, now: number): Held {
    let h = this.held.get(key);
    if (!h) {
      h = { tokens: 0, until: 0, owed: 0, shared: this.burst, emptyUntil: 0 };
      if (this.held.size >= this.maxKeys) this.held.delete(this.held.keys().next().value as string);
      this.held.set(key, h);
    } else if (h.tokens > 0 && now > h.until && !h.pending) {
      h.owed += h.tokens;
      h.tokens = 0;
    }
    return h;
  }

  private spend(key: string, h: Held): RateDecision {
    h.tokens -= 1;
    if (h.tokens < Math.ceil(this.chunk / 2) && !h.pending && this.now() >= h.emptyUntil) this.reserve(key, h).catch(this.onError);
    const left = Math.max(0, Math.floor(h.tokens + h.shared));
    return { allowed: true, limit: this.burst, remaining: left, resetSeconds: Math.ceil((this.burst - left) / this.rate) };
  }

  private refused(h: Held, now: number): RateDecision {
    return { allowed: false, limit: this.burst, remaining: 0, resetSeconds: Math.max(1, Math.ceil((h.emptyUntil - now) / 1000)) };
  }

  private async wait(key: string, h: Held): Promise<RateDecision> {
    for (;;) {
      try {
        await this.reserve(key, h);
      } catch (err) {
        this.onError(err);
        return this.fallback.take(key);
      }
      if (h.tokens >= 1) return this.spend(key, h);
      const now = this.now();
      if (now < h.emptyUntil) return this.refused(h, now);
      // Requests waiting on the same reservation took its tokens, and the bucket had more: reserve again.
    }
  }

  /** One reservation in flight per key; concurrent callers share it. */
  private reserve(key: string, h: Held): Promise<void> {
    h.pending ??= this.reserveNow(key, h).finally(() => {
      h.pending = undefined;
    });
    return h.pending;
  }

  private async reserveNow(key: string, h: Held): Promise<void> {
    const give = h.owed;
    h.owed = 0;
    const want = this.chunk;
    // Refill by the database's clock (replicas' clocks may differ), hand back `give`, take up to `want` whole tokens.
    const refilled = sql`least(${this.burst}::float8,
      b.tokens + greatest(0, excluded.at_ms - b.at_ms) * ${this.rate}::float8 / 1000.0 + ${give}::float8)`;
    const grant = sql`greatest(0, least(${want}::int, floor(${refilled})::int))`;
    const sweep = this.now() - this.lastSweep > 60_000;
    if (sweep) this.lastSweep = this.now();
    let row: { granted: number; tokens: number } | undefined;
    try {
      row = await this.store.transaction(async (tx) => {
        const res = await sql<{ granted: number; tokens: number }>`
          insert into rate_limit_buckets as b (key, tokens, at_ms, granted)
          values (${key}, ${this.burst}::float8 - least(${want}::int, ${this.burst}::int),
                  (extract(epoch from clock_timestamp()) * 1000)::bigint, least(${want}::int, ${this.burst}::int))
          on conflict (key) do update set tokens = ${refilled} - ${grant}, at_ms = greatest(b.at_ms, excluded.at_ms), granted = ${grant}
          returning granted, tokens`.execute(tx);
        // A row refilled to the brim is the same as no row: drop the idle ones, at most once a minute per replica.
        if (sweep) {
          const idleMs = Math.ceil((this.burst / this.rate) * 1000) + 60_000;
          await sql`delete from rate_limit_buckets
            where at_ms < (extract(epoch from clock_timestamp()) * 1000)::bigint - ${idleMs}::bigint`.execute(tx);
        }
        return res.rows[0];
      });
    } catch (err) {
      h.owed += give;
      throw err;
    }
    if (!row) throw new Error('rate limit reservation returned no row');
    const now = this.now();
    const granted = Number(row.granted);
    const tokens = Number(row.tokens);
    h.tokens += granted;
    h.until = now + RESERVATION_LEASE_MS;
    h.shared = tokens;
    h.emptyUntil = tokens < 1 ? now + Math.ceil(((1 - tokens) / this.rate) * 1000) : 0;
  }
}
