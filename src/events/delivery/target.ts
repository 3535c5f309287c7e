/**
 * The delivery engine's seam: a lane (one webhook subscription today, an output connector later)
 * hands the engine a target that makes one attempt and says how it went. The engine owns the rest:
 * durable rows, claims, order, the retry ladder, `dead`, redelivery.
 */
import type { Transaction } from 'kysely';
import type { BusEvent } from '../event-types.js';

/** One claimed delivery: its attempt number (1 for the first) and its event. */
export interface Claimed {
  id: string;
  attempt: number;
  event: BusEvent;
}
import type { Database } from '../../store/schema.js';

/** The outcome of one attempt: delivered, worth retrying (network, 408, 425, 429, 5xx), or failed for good. */
export interface AttemptOutcome {
  result: 'delivered' | 'retry' | 'failed';
  /** the receiver's HTTP status, when one came */
  status?: number;
  /** what went wrong, for the delivery row (never a secret) */
  error?: string;
  /** the receiver's `Retry-After`, in ms */
  retryAfterMs?: number;
}

/** One attempt to make. */
export interface DeliveryJob {
  deliveryId: string;
  tenant: string;
  laneId: string;
  /** 1 for the first attempt */
  attempt: number;
  event: BusEvent;
}

export interface DeliveryTarget {
  send(job: DeliveryJob): Promise<AttemptOutcome>;
  close?(): void;
}

/** A lane: where and how the events of one subscription (or connector) go. */
export interface Lane {
  id: string;
  tenant: string;
  /** a name for logs and stats */
  name: string;
  maxAttempts: number;
  initialIntervalS: number;
  /**
   * The longest one attempt may take (the target's timeout plus a margin). No longer the claim's
   * lease: claims hold a short lease renewed by heartbeat while the lane works (lease-keeper.ts).
   */
  leaseMs: number;
  target: DeliveryTarget;
  /**
   * Turns new events of the log into queued deliveries inside `tx` and moves the lane's cursor;
   * `more`: it stopped at its batch size and has more to do. Absent for lanes fed some other way.
   */
  dispatch?(tx: Transaction<Database>): Promise<{ queued: number; more: boolean }>;
  /**
   * Optional: lanes that name the same group are dispatched together, by one call in one
   * transaction (one read of the log for a hundred subscriptions of a tenant); such a lane's own
   * `dispatch` is then not called.
   */
  group?: DispatchGroup;
  /** a fingerprint of the settings: a changed one restarts the lane with the new target */
  revision: string;
}

/**
 * A lane's offer to take its next deliveries straight from the dispatcher, already claimed: the lease
 * to write them under, and which open rows are its own (attempted and being written, or held under
 * its lease); any other open row of the lane (a queued one, another worker's) refuses the offer.
 */
export interface HandOffer {
  leaseUntil: number;
  owns(row: { id: string; lease_until: number | null }): boolean;
}

/** A dispatcher shared by lanes (one per tenant for webhook subscriptions). */
export interface DispatchGroup {
  key: string;
  tenant: string;
  /**
   * Queues new events for `laneIds` inside `tx`; which lanes got queued deliveries, and whether it
   * stopped at its batch size. A lane in `offers` whose store holds no open delivery but its own gets its
   * rows inserted claimed (`delivering`, under its lease) and handed back in `handed`, in order.
   */
  dispatch(
    tx: Transaction<Database>,
    laneIds: readonly string[],
    offers?: ReadonlyMap<string, HandOffer>,
  ): Promise<{ queued: ReadonlySet<string>; more: boolean; handed?: ReadonlyMap<string, Claimed[]> }>;
}
