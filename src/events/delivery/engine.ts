/**
 * The delivery engine: one lane per subscription (or, later, output connector), each on its own
 * async loop, so a receiver that is down or slow holds up only its own lane. New events of the
 * durable log become delivery rows (`dispatch`: per lane, or once for a group of lanes — all the
 * webhook subscriptions of a tenant — in one transaction). A lane then claims the ready prefix of
 * its open deliveries, head first, up to a batch in one transaction (delivery-batch.ts), and
 * attempts them one after the other over its target's keep-alive connections: the first attempts
 * follow the event sequence, and a delivery that must wait for a retry holds the lane (the rest of
 * the claim is released), so a receiver that was down gets its backlog in order. Outcomes go back
 * in batches across lanes (finisher.ts). Everything the engine knows is in the store: a restarted
 * process (or another replica) picks up where the last one stopped once the claims' short lease,
 * renewed by heartbeat while a lane works (lease-keeper.ts), lapses. The bus
 * wakes the dispatchers on new events; a poll (1 s) covers events committed by other processes.
 */
import type { Logger } from 'pino';
import { outsideIntentScope } from '../../ledger/audit-intent.js';
import type { Store } from '../../store/store.js';
import { claimBatch, EventCache, type BatchClaim, type Finish } from './delivery-batch.js';
import { Finisher } from './finisher.js';
import { CLAIM_LEASE_MS, HEARTBEAT_MS, renewHeld, settled } from './lease-keeper.js';
import { GroupRun, Running, type EngineMemory, type LaneStats } from './lane-run.js';
import type { AttemptOutcome, Claimed, DispatchGroup, HandOffer, Lane } from './target.js';

/** Deliveries a lane claims at once. */
export const CLAIM_BATCH = 128;

export interface EngineOptions {
  store: Store;
  log?: Logger;
  /** the lanes to run now (reloaded on `refresh()` and every `reloadMs`) */
  loadLanes(): Promise<Lane[]>;
  pollMs?: number;
  reloadMs?: number;
  /** deliveries a lane claims at once (default CLAIM_BATCH) */
  batch?: number;
  /** events the engine keeps read for its lanes (default EventCache's) */
  cachedEvents?: number;
  /** a claim's lease, renewed every `heartbeatMs` while the lane holds it (lease-keeper.ts) */
  claimLeaseMs?: number;
  heartbeatMs?: number;
}

export type { EngineMemory, LaneStats } from './lane-run.js';

export class DeliveryEngine {
  readonly #opts: EngineOptions;
  readonly #lanes = new Map<string, Running>();
  readonly #groups = new Map<string, GroupRun>();
  readonly #cache: EventCache;
  readonly #finisher: Finisher;
  #reloadTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #beatTimer: NodeJS.Timeout | undefined;
  readonly #leaseMs: number;
  #closed = false;
  #reloading: Promise<void> | undefined;

  constructor(opts: EngineOptions) {
    this.#opts = opts;
    this.#cache = new EventCache(opts.cachedEvents);
    this.#finisher = new Finisher(opts.store);
    this.#leaseMs = opts.claimLeaseMs ?? CLAIM_LEASE_MS;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.#reloadTimer = setInterval(
      () => void this.refresh().catch((err: unknown) => this.#opts.log?.warn({ err }, 'eventing: reloading lanes failed')),
      this.#opts.reloadMs ?? 5_000,
    );
    this.#reloadTimer.unref();
    // Events other processes committed (or this one before a restart) reach the lanes by this poll.
    this.#pollTimer = setInterval(() => this.wake(), this.#opts.pollMs ?? 1_000);
    this.#pollTimer.unref();
    // Held claims stay ours while we work on them; a dead replica's lapse within one lease.
    this.#beatTimer = setInterval(
      () => renewHeld(this.#opts.store, this.#lanes.values(), this.#leaseMs, this.#opts.log),
      this.#opts.heartbeatMs ?? HEARTBEAT_MS,
    );
    this.#beatTimer.unref();
  }

  /** Reloads the lanes now: new ones start, removed ones stop, changed ones restart with their new settings. */
  refresh(): Promise<void> {
    // Lanes and dispatchers outlive the request that asked (a subscription created, events
    // committed): they run outside its audit scope, or their writes would count as its changes.
    return outsideIntentScope(() => this.#refresh());
  }

  #refresh(): Promise<void> {
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
      const groups = new Map<string, DispatchGroup>();
      for (const r of this.#lanes.values()) if (r.lane.group) groups.set(r.lane.group.key, r.lane.group);
      for (const key of this.#groups.keys()) if (!groups.has(key)) this.#groups.delete(key);
      for (const [key, g] of groups) {
        const cur = this.#groups.get(key);
        if (cur) cur.group = g;
        else this.#groups.set(key, new GroupRun(g));
        this.#dispatchGroup(this.#groups.get(key) as GroupRun);
      }
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

  /** New events (of `tenant`, or of anyone): dispatchers look at the log again, and so do lanes that dispatch alone. */
  wake(tenant?: string): void {
    outsideIntentScope(() => this.#wakeNow(tenant));
  }

  #wakeNow(tenant?: string): void {
    for (const g of this.#groups.values()) if (tenant === undefined || g.group.tenant === tenant) this.#dispatchGroup(g);
    for (const r of this.#lanes.values()) if (!r.lane.group && (tenant === undefined || r.lane.tenant === tenant)) r.wake();
  }

  /** Lanes of `tenant` (or all) look at their deliveries again (a redelivery, a replay, another replica's release). */
  wakeLanes(tenant?: string): void {
    for (const r of this.#lanes.values()) if (tenant === undefined || r.lane.tenant === tenant) r.wake();
  }

  /** Runs a group's dispatch until it has nothing more; a wake while it runs makes it go round again. */
  #dispatchGroup(g: GroupRun): void {
    g.dirty = true;
    if (g.running || this.#closed) return;
    g.running = (async () => {
      while (g.dirty && !this.#closed && this.#groups.get(g.group.key) === g) {
        g.dirty = false;
        const lanes = [...this.#lanes.values()].filter((r) => r.lane.group?.key === g.group.key);
        if (lanes.length === 0) break;
        const offers = new Map<string, HandOffer & { epoch: number }>();
        for (const r of lanes) {
          if (r.stopped) continue;
          // Rows the lane attempted (outcome being written) or holds under its own lease are no obstacle.
          const owns = (row: { id: string; lease_until: number | null }): boolean =>
            r.writing.has(row.id) || (row.lease_until !== null && r.holding.get(row.id) === Number(row.lease_until));
          offers.set(r.lane.id, { leaseUntil: Date.now() + this.#leaseMs, owns, epoch: r.epoch });
        }
        try {
          const ids = lanes.map((r) => r.lane.id);
          const { queued, more, handed } = await this.#opts.store.withTenant(g.group.tenant, (tx) => g.group.dispatch(tx, ids, offers));
          for (const id of queued) this.#lanes.get(id)?.wake();
          for (const [id, items] of handed ?? []) {
            const o = offers.get(id) as HandOffer & { epoch: number };
            // The lane that made the offer, not a successor with the same id (a restarted lane).
            this.#hand(lanes.find((r) => r.lane.id === id), o.leaseUntil, items, o.epoch);
          }
          if (more) g.dirty = true;
        } catch (err) {
          if (this.#closed) break;
          this.#opts.log?.warn({ err, group: g.group.key }, 'eventing: dispatch failed; retrying shortly');
          await new Promise((res) => setTimeout(res, 500));
          g.dirty = true;
        }
      }
    })().finally(() => (g.running = undefined));
  }

  /**
   * Queues the deliveries the dispatcher claimed for a lane behind what it holds; a lane that gave
   * rows back since its offer (held by a retry, stopped) or is gone gives them back too.
   */
  #hand(r: Running | undefined, leaseUntil: number, items: Claimed[], epoch?: number): void {
    if (r && !r.stopped && epoch !== undefined && r.epoch === epoch) {
      r.handed.push({ leaseUntil, items });
      for (const x of items) r.holding.set(x.id, leaseUntil);
      r.nudge();
      return;
    }
    const tenant = r?.lane.tenant ?? (items[0] as Claimed).event.tenant;
    const release = items.map((x) => ({
      id: x.id, attempt: 0, leaseUntil, outcome: 'release' as const, maxAttempts: 1, initialIntervalS: 1,
    }));
    const warn = (err: unknown): void =>
      this.#opts.log?.warn({ err, subscription: r?.lane.id }, 'eventing: giving back handed rows failed (lease lapses)');
    void this.#finisher.finish(tenant, release).catch(warn);
  }

  async #run(r: Running): Promise<void> {
    const { store, log } = this.#opts;
    const lane = r.lane;
    const lock = store.capabilities.supportsConcurrentWriters;
    while (!r.stopped && !this.#closed) {
      try {
        const next = r.handed.shift();
        if (next) {
          const held = await this.#attempt(r, next.items, next.leaseUntil, true);
          // Nothing woke the lane meanwhile (no rows queued for it): no need to look at the store.
          if (!held && !r.dirty && r.handed.length === 0) await r.sleep(60_000);
          continue;
        }
        if (r.dirty) {
          r.dirty = false;
          if (lane.dispatch && !lane.group) {
            const { more } = await store.withTenant(lane.tenant, (tx) => (lane.dispatch as NonNullable<Lane['dispatch']>)(tx));
            if (more) r.dirty = true;
          }
        }
        const claim: BatchClaim = await store.withTenant(lane.tenant, (tx) =>
          claimBatch(tx, lane.tenant, lane.id, this.#opts.batch ?? CLAIM_BATCH, this.#leaseMs, this.#cache, lock, r.writing),
        );
        if (claim.kind === 'wait') {
          if (r.handed.length > 0) continue;
          await r.sleep(claim.readyAt === undefined ? 60_000 : claim.readyAt - Date.now());
          continue;
        }
        await this.#attempt(r, claim.items, claim.leaseUntil);
      } catch (err) {
        r.inFlight = false;
        if (this.#closed || r.stopped) break;
        log?.warn({ err, subscription: lane.id }, 'eventing: lane step failed; retrying shortly');
        await new Promise((res) => setTimeout(res, 500));
      }
    }
    this.#giveBack(r);
  }

  /** Releases the lane's handed deliveries (it stops, or a retry holds it: nothing behind the head goes first). */
  #giveBack(r: Running): void {
    r.epoch++;
    for (const h of r.handed.splice(0)) {
      // Under the lease the heartbeat moved them to (a row it lost is another worker's: nothing to give back).
      const byLease = new Map<number, Claimed[]>();
      for (const x of h.items) {
        const lease = r.holding.get(x.id);
        r.holding.delete(x.id);
        if (lease !== undefined) byLease.set(lease, [...(byLease.get(lease) ?? []), x]);
      }
      for (const [lease, items] of byLease) this.#hand(undefined, lease, items);
    }
  }

  /**
   * Attempts a claim's deliveries in order; stops at one that must wait for a retry (the rest are
   * released) or when the lane stops. True: the lane is held.
   */
  async #attempt(r: Running, items: Claimed[], leaseUntil: number, handed = false): Promise<boolean> {
    // Handed rows are held since the hand-off (their lease maybe renewed, or lost, since).
    if (!handed) for (const x of items) r.holding.set(x.id, leaseUntil);
    let done = false;
    try {
      const held = await this.#attemptAll(r, items, leaseUntil);
      done = true;
      return held;
    } finally {
      // A step that threw leaves its rows to their lease: no longer the lane's, and nothing handed goes before them.
      if (!done) {
        for (const x of items) r.holding.delete(x.id);
        this.#giveBack(r);
      }
    }
  }

  async #attemptAll(r: Running, items: Claimed[], leaseUntil: number): Promise<boolean> {
    const { log } = this.#opts;
    const lane = r.lane;
    const finishes: Array<Promise<Map<string, string>>> = [];
    const fin = (f: Omit<Finish, 'maxAttempts' | 'initialIntervalS'>): void =>
      void finishes.push(
        this.#finisher.finish(lane.tenant, [{ ...f, maxAttempts: lane.maxAttempts, initialIntervalS: lane.initialIntervalS }]),
      );
    let held = false;
    let i = 0;
    /** the row's lease in the store now (no renewal in flight); it is forgotten, so no later renewal moves it */
    const release = async (id: string): Promise<number> => {
      await settled(r);
      const lease = r.holding.get(id) ?? leaseUntil;
      r.holding.delete(id);
      return lease;
    };
    for (; i < items.length && !r.stopped && !this.#closed; i++) {
      const item = items[i] as (typeof items)[number];
      await settled(r);
      // The heartbeat found it under another worker's lease (ours lapsed): not ours to attempt, nor what follows.
      if (!r.holding.has(item.id)) {
        held = true;
        break;
      }
      r.inFlight = true;
      const outcome: AttemptOutcome = await lane.target
        .send({ deliveryId: item.id, tenant: lane.tenant, laneId: lane.id, attempt: item.attempt, event: item.event })
        .catch((err: unknown) => ({ result: 'retry' as const, error: String((err as Error)?.message ?? err) }));
      r.inFlight = false;
      fin({ id: item.id, attempt: item.attempt, leaseUntil: await release(item.id), outcome });
      if (outcome.result !== 'delivered')
        log?.info(
          { subscription: lane.id, delivery: item.id, attempt: item.attempt, http_status: outcome.status, error: outcome.error },
          'eventing: delivery attempt did not deliver',
        );
      // A delivery that will be retried holds the lane: nothing behind it goes first.
      if (outcome.result === 'retry' && item.attempt < lane.maxAttempts) {
        held = true;
        i++;
        break;
      }
    }
    if (i < items.length) held = true;
    for (; i < items.length; i++) {
      const id = (items[i] as (typeof items)[number]).id;
      fin({ id, attempt: 0, leaseUntil: await release(id), outcome: 'release' });
    }
    if (held || r.stopped) this.#giveBack(r);
    const ids = items.map((x) => x.id);
    for (const id of ids) {
      r.writing.add(id);
      r.holding.delete(id);
    }
    const written = Promise.all(finishes).then((maps) => {
      for (const m of maps) {
        for (const status of m.values()) {
          if (status === 'delivered') r.delivered++;
          else if (status === 'queued') r.retried++;
          else if (status === 'failed') r.failed++;
          else if (status === 'dead') r.dead++;
        }
      }
    });
    r.writes.push(written);
    void written
      .finally(() => {
        for (const id of ids) r.writing.delete(id);
        r.writes.splice(r.writes.indexOf(written), 1);
      })
      .catch(() => undefined);
    // The next claim need not wait for these outcomes (it passes over them), unless the lane is held
    // (a retry, a release: the rows go back to `queued` and must be seen as such) or two claims are
    // already being written.
    if (held || r.stopped || r.writes.length > 2) await (held || r.stopped ? Promise.all(r.writes) : r.writes[0]);
    return held;
  }

  /** The deliveries and events held in memory now, across lanes (a test checks they stay bounded while a backlog drains). */
  memory(): EngineMemory {
    let held = 0;
    let writing = 0;
    for (const r of this.#lanes.values()) {
      // Handed rows are in `holding` from the hand-off on.
      held += r.holding.size;
      writing += r.writing.size;
    }
    return { held, writing, events: this.#cache.size };
  }

  stats(): LaneStats[] {
    return [...this.#lanes.values()].map((r) => ({
      id: r.lane.id,
      tenant: r.lane.tenant,
      name: r.lane.name,
      delivered: r.delivered,
      retried: r.retried,
      failed: r.failed,
      dead: r.dead,
      in_flight: r.inFlight,
    }));
  }

  /**
   * Stops every lane; an attempt in flight finishes (its row stays `delivering` if the store closes first, and is taken over after its
   * lease).
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#reloadTimer);
    clearInterval(this.#pollTimer);
    clearInterval(this.#beatTimer);
    await this.#reloading;
    const lanes = [...this.#lanes.values()];
    for (const r of lanes) this.#stop(r);
    await Promise.all(lanes.map((r) => r.done));
    await Promise.all([...this.#groups.values()].map((g) => g.running));
    await this.#finisher.idle();
  }
}

