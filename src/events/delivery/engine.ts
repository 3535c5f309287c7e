/**
 * The delivery engine: one lane per subscription (or, later, output connector), each on its own
 * async loop, so a receiver that is down or slow holds up only its own lane. A lane turns new
 * events of the durable log into delivery rows (`dispatch`), then works its open deliveries head
 * first: the delivery with the lowest event sequence is attempted before any later one, so the
 * first attempts follow the event sequence, and a receiver that was down gets its backlog in order.
 * Everything the engine knows is in the store: a restarted process (or another replica) picks up
 * where the last one stopped. The bus wakes lanes on new events; a poll (1 s) covers events
 * committed by other processes.
 */
import type { Logger } from 'pino';
import type { Store } from '../../store/store.js';
import { claimDelivery, finishAttempt, laneHead } from './delivery-store.js';
import type { AttemptOutcome, Lane } from './target.js';

export interface EngineOptions {
  store: Store;
  log?: Logger;
  /** the lanes to run now (reloaded on `refresh()` and every `reloadMs`) */
  loadLanes(): Promise<Lane[]>;
  pollMs?: number;
  reloadMs?: number;
}

export interface LaneStats {
  id: string;
  tenant: string;
  name: string;
  delivered: number;
  retried: number;
  failed: number;
  dead: number;
  in_flight: boolean;
}

class Running {
  stopped = false;
  dirty = true;
  inFlight = false;
  delivered = 0;
  retried = 0;
  failed = 0;
  dead = 0;
  done: Promise<void> = Promise.resolve();
  #wake: (() => void) | undefined;
  constructor(public lane: Lane) {}
  wake(): void {
    this.dirty = true;
    this.#wake?.();
  }
  /** sleeps until `ms` pass or the lane is woken */
  sleep(ms: number): Promise<void> {
    if (this.dirty || this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, Math.max(1, ms));
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.#wake = done;
    }).then(() => void (this.#wake = undefined));
  }
}

export class DeliveryEngine {
  readonly #opts: EngineOptions;
  readonly #lanes = new Map<string, Running>();
  #reloadTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #reloading: Promise<void> | undefined;

  constructor(opts: EngineOptions) {
    this.#opts = opts;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.#reloadTimer = setInterval(() => void this.refresh().catch((err: unknown) => this.#opts.log?.warn({ err }, 'eventing: reloading lanes failed')), this.#opts.reloadMs ?? 5_000);
    this.#reloadTimer.unref();
    // Events other processes committed (or this one before a restart) reach the lanes by this poll.
    this.#pollTimer = setInterval(() => this.wake(), this.#opts.pollMs ?? 1_000);
    this.#pollTimer.unref();
  }

  /** Reloads the lanes now: new ones start, removed ones stop, changed ones restart with their new settings. */
  refresh(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const run = (this.#reloading ?? Promise.resolve()).then(async () => {
      const lanes = await this.#opts.loadLanes();
      const seen = new Set<string>();
      for (const lane of lanes) {
        seen.add(lane.id);
        const cur = this.#lanes.get(lane.id);
        if (cur && cur.lane.revision === lane.revision) {
          lane.target.close?.();
          continue;
        }
        if (cur) this.#stop(cur);
        const r = new Running(lane);
        this.#lanes.set(lane.id, r);
        r.done = this.#run(r);
      }
      for (const [id, r] of this.#lanes) if (!seen.has(id)) this.#stop(r);
    });
    this.#reloading = run.catch(() => undefined);
    return run;
  }

  #stop(r: Running): void {
    r.stopped = true;
    r.wake();
    this.#lanes.delete(r.lane.id);
    void r.done.finally(() => r.lane.target.close?.());
  }

  /** New events (of `tenant`, or of anyone): lanes look at the log again. */
  wake(tenant?: string): void {
    for (const r of this.#lanes.values()) if (tenant === undefined || r.lane.tenant === tenant) r.wake();
  }

  async #run(r: Running): Promise<void> {
    const { store, log } = this.#opts;
    const lane = r.lane;
    while (!r.stopped && !this.#closed) {
      try {
        if (r.dirty) {
          r.dirty = false;
          if (lane.dispatch) {
            const { more } = await store.withTenant(lane.tenant, (tx) => (lane.dispatch as NonNullable<Lane['dispatch']>)(tx));
            if (more) r.dirty = true;
          }
        }
        const head = await laneHead(store, lane.tenant, lane.id);
        const now = Date.now();
        if (!head) {
          await r.sleep(60_000);
          continue;
        }
        const readyAt = head.status === 'queued' ? head.due_at : (head.lease_until ?? 0) + 1;
        if (readyAt > now) {
          await r.sleep(readyAt - now);
          continue;
        }
        const claim = await claimDelivery(store, lane.tenant, head.id, lane.leaseMs);
        if (claim.kind !== 'claimed') continue;
        r.inFlight = true;
        const outcome: AttemptOutcome = await lane.target.send({ deliveryId: head.id, tenant: lane.tenant, laneId: lane.id, attempt: claim.attempt, event: claim.event }).catch((err: unknown) => ({ result: 'retry' as const, error: String((err as Error)?.message ?? err) }));
        r.inFlight = false;
        const status = await finishAttempt(store, lane.tenant, head.id, claim.attempt, outcome, lane);
        if (status === 'delivered') r.delivered++;
        else if (status === 'queued') r.retried++;
        else if (status === 'failed') r.failed++;
        else r.dead++;
        if (status !== 'delivered') log?.info({ subscription: lane.id, delivery: head.id, attempt: claim.attempt, status, http_status: outcome.status, error: outcome.error }, 'eventing: delivery attempt did not deliver');
      } catch (err) {
        r.inFlight = false;
        if (this.#closed || r.stopped) break;
        log?.warn({ err, subscription: lane.id }, 'eventing: lane step failed; retrying shortly');
        await new Promise((res) => setTimeout(res, 500));
      }
    }
  }

  stats(): LaneStats[] {
    return [...this.#lanes.values()].map((r) => ({ id: r.lane.id, tenant: r.lane.tenant, name: r.lane.name, delivered: r.delivered, retried: r.retried, failed: r.failed, dead: r.dead, in_flight: r.inFlight }));
  }

  /** Stops every lane; an attempt in flight finishes (its row stays `delivering` if the store closes first, and is taken over after its lease). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#reloadTimer);
    clearInterval(this.#pollTimer);
    await this.#reloading;
    const lanes = [...this.#lanes.values()];
    for (const r of lanes) this.#stop(r);
    await Promise.all(lanes.map((r) => r.done));
  }
}
