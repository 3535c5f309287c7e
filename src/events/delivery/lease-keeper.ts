/**
 * Claim leases renewed by heartbeat (docs/eventing.md "Several replicas", docs/scale-out.md). A
 * lane claims deliveries under a short lease (CLAIM_LEASE_MS) and, while it holds them (queued
 * behind an attempt, or in flight), the engine moves the lease forward every HEARTBEAT_MS. A
 * replica that dies stops renewing: its rows lapse within one lease and another replica's lane
 * takes them over, instead of waiting out a lease sized for the slowest receiver.
 *
 * The lease is also the claim's token (delivery-batch.ts: a finish writes only rows still under
 * the lease it names), so a renewal and a finish of the same row must not cross: the lane waits for
 * a renewal in flight before it reads a row's lease for its finish, and forgets the row at once,
 * so no later renewal moves it.
 */
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';

/** How long a claim holds a delivery without renewal: a dead replica's deliveries move on after at most this. */
export const CLAIM_LEASE_MS = 4_000;
/** How often held claims are renewed (well inside the lease, so a slow round trip or two does not lose them). */
export const HEARTBEAT_MS = 1_000;

/** What the keeper needs of a running lane. */
export interface Holder {
  readonly lane: { id: string; tenant: string };
  /** rows held (claimed, not yet finished) → their lease; the keeper renews and updates it, and drops rows it lost */
  readonly holding: Map<string, number>;
  /** the renewal in flight, if any */
  renewing: Promise<void> | undefined;
}

/** Resolves once no renewal of `h` is in flight: a lease read right after it is the row's lease in the store. */
export async function settled(h: Holder): Promise<void> {
  while (h.renewing) await h.renewing;
}

/**
 * Renews the leases of every holder's rows (one statement per lease of a lane); a row another
 * worker took over (its lease is no longer ours) is dropped from the holder: the lane will not attempt it.
 */
export function renewHeld(store: Store, holders: Iterable<Holder>, leaseMs: number, log?: Logger): void {
  for (const h of holders) {
    if (h.renewing || h.holding.size === 0) continue;
    const byLease = new Map<number, string[]>();
    for (const [id, lease] of h.holding) byLease.set(lease, [...(byLease.get(lease) ?? []), id]);
    h.renewing = (async () => {
      for (const [from, ids] of byLease) {
        const to = Math.max(Date.now() + leaseMs, from + 1);
        const renewed = await store.withTenant(h.lane.tenant, (tx) => renewRows(tx, h.lane.tenant, ids, from, to));
        for (const id of ids) {
          if (h.holding.get(id) !== from) continue;
          if (renewed.has(id)) h.holding.set(id, to);
          else h.holding.delete(id);
        }
      }
    })()
      .catch((err: unknown) => log?.warn({ err, subscription: h.lane.id }, 'eventing: renewing claim leases failed; retrying'))
      .finally(() => {
        h.renewing = undefined;
      });
  }
}

/** Moves `ids` still `delivering` under lease `from` to lease `to`; the ids moved. */
async function renewRows(tx: Transaction<Database>, tenant: string, ids: string[], from: number, to: number): Promise<Set<string>> {
  const rows = await tx
    .updateTable('event_deliveries')
    .set({ lease_until: to })
    .where('tenant_id', '=', tenant)
    .where('id', 'in', ids)
    .where('status', '=', 'delivering')
    .where('lease_until', '=', from)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}
