/** The engine's state of one running lane and of one dispatch group (engine.ts). */
import type { Claimed, DispatchGroup, Lane } from './target.js';

/** What the engine holds in memory now: each is bounded by the lanes and the batch, never by the backlog. */
export interface EngineMemory {
  /** deliveries claimed or handed to a lane and not attempted yet */
  held: number;
  /** deliveries attempted whose outcome is not committed yet */
  writing: number;
  /** events read from the log and kept for the lanes */
  events: number;
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

/** One lane's loop: what it holds claimed (renewed by heartbeat, lease-keeper.ts), hands, writes and counts. */
export class Running {
  stopped = false;
  dirty = true;
  inFlight = false;
  /** deliveries the dispatcher inserted claimed for this lane, to attempt next, oldest first */
  readonly handed: Array<{ leaseUntil: number; items: Claimed[] }> = [];
  /** rows this lane holds claimed and has not finished (its claim's and the handed ones), with their lease; renewed by heartbeat */
  readonly holding = new Map<string, number>();
  /** the heartbeat's renewal of `holding` in flight */
  renewing: Promise<void> | undefined;
  /** bumped whenever the lane gives rows back (a retry holds it, a lease lapsed, it stops): an offer made before is void */
  epoch = 0;
  delivered = 0;
  retried = 0;
  failed = 0;
  dead = 0;
  done: Promise<void> = Promise.resolve();
  /** deliveries attempted whose outcome is not committed yet (the next claim passes over them) */
  readonly writing = new Set<string>();
  /** the outcome writes of the last claims, oldest first */
  readonly writes: Array<Promise<unknown>> = [];
  #wake: (() => void) | undefined;
  constructor(public lane: Lane) {}
  wake(): void {
    this.dirty = true;
    this.#wake?.();
  }
  /** ends a sleep without asking for a look at the store (the lane has handed rows to attempt) */
  nudge(): void {
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

export class GroupRun {
  dirty = true;
  running: Promise<void> | undefined;
  constructor(public group: DispatchGroup) {}
}
