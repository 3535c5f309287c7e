/**
 * The engine's batched statements on `event_deliveries` (docs/eventing.md "Throughput"): a lane
 * claims the ready prefix of its open deliveries — up to a batch, head first, in one transaction —
 * and the outcomes of many lanes are written back together, one UPDATE per group of rows that end
 * alike. Every row of one claim carries the same `lease_until`, which is also the claim's token: a
 * finish or release touches only rows still `delivering` under that exact lease, so a worker whose
 * lease lapsed (and whose rows another worker took over, with a later lease) writes nothing.
 */
import { sql, type Transaction } from 'kysely';
import { nowTimestamp } from '../../ledger/time.js';
import type { Database } from '../../store/schema.js';
import { EVENT_COLUMNS, eventFromRow } from '../event-log.js';
import type { BusEvent } from '../event-types.js';
import { retryDelayMs } from './ladder.js';
import type { DeliveryStatus } from './delivery-store.js';
import type { AttemptOutcome, Claimed } from './target.js';

type Tx = Transaction<Database>;


/**
 * A claim: deliveries to attempt in order under one lease, or when the head of the lane is next ready (epoch ms; undefined: nothing open).
 */
export type BatchClaim = { kind: 'claimed'; leaseUntil: number; items: Claimed[] } | { kind: 'wait'; readyAt: number | undefined };

/** Events by (tenant, sequence), shared by the lanes of an engine: a hundred lanes of one tenant read each event once. Bounded. */
export class EventCache {
  readonly #map = new Map<string, BusEvent>();
  constructor(readonly max = 20_000) {}
  get size(): number {
    return this.#map.size;
  }
  get(tenant: string, seq: number): BusEvent | undefined {
    return this.#map.get(`${tenant}:${seq}`);
  }
  set(e: BusEvent): void {
    if (this.#map.size >= this.max) this.#map.delete(this.#map.keys().next().value as string);
    this.#map.set(`${e.tenant}:${e.sequence ?? 0}`, e);
  }
}

const ready = (r: { status: string; due_at: unknown; lease_until: unknown }, now: number): boolean =>
  r.status === 'queued' ? Number(r.due_at) <= now : r.lease_until !== null && Number(r.lease_until) < now;

/**
 * Claims the ready prefix (at most `max`) of a lane's open deliveries in sequence order: the head
 * first, and nothing behind a head that is not ready (first attempts follow the sequence, and a
 * retry waiting on its ladder holds the lane). `lock` (Postgres) takes the subscription row first so
 * two replicas claiming one lane take turns and each sees the other's claims.
 */
export async function claimBatch(
  tx: Tx,
  tenant: string,
  laneId: string,
  max: number,
  leaseMs: number,
  cache: EventCache,
  lock: boolean,
  skip: ReadonlySet<string> = new Set(),
  now = Date.now(),
): Promise<BatchClaim> {
  if (lock)
    await tx.selectFrom('event_subscriptions').select('id').where('tenant_id', '=', tenant).where('id', '=', laneId).forUpdate().execute();
  // One ordered index range per status (an IN over both would sort the lane's whole backlog), merged here.
  const open = (status: string, limit: number) =>
    tx
      .selectFrom('event_deliveries')
      .select(['id', 'status', 'due_at', 'lease_until', 'attempts', 'event_seq', 'payload'])
      .where('tenant_id', '=', tenant)
      .where('subscription_id', '=', laneId)
      .where('status', '=', status)
      .orderBy('event_seq')
      .orderBy('id')
      .limit(limit)
      .execute();
  const queued = await open('queued', max);
  // Rows this worker attempted and whose outcome is still being written (`skip`) count as done.
  const delivering = (await open('delivering', max + skip.size)).filter((r) => !skip.has(r.id));
  const rows = [...queued, ...delivering]
    .sort((a, b) => Number(a.event_seq) - Number(b.event_seq) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, max);
  const head = rows[0];
  if (!head) return { kind: 'wait', readyAt: undefined };
  let n = 0;
  while (n < rows.length && ready(rows[n] as (typeof rows)[number], now)) n++;
  if (n === 0) return { kind: 'wait', readyAt: head.status === 'queued' ? Number(head.due_at) : Number(head.lease_until ?? 0) + 1 };
  const take = rows.slice(0, n);
  const leaseUntil = now + leaseMs;
  const ids = take.map((r) => r.id);
  const res = await tx
    .updateTable('event_deliveries')
    .set((eb) => ({ status: 'delivering', attempts: eb('attempts', '+', 1), lease_until: leaseUntil, updated_at: nowTimestamp() }))
    .where('tenant_id', '=', tenant)
    .where('id', 'in', ids)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'queued'), eb('due_at', '<=', now)]),
        eb.and([eb('status', '=', 'delivering'), eb('lease_until', '<', now)]),
      ]),
    )
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== ids.length)
    throw new Error(`claim of lane ${laneId} raced another worker (${String(res.numUpdatedRows)} of ${ids.length} rows)`);
  // Events: from the cache, else read once for the batch. The batch keeps its own references: the
  // cache is shared by every lane, and others may evict an entry while this claim awaits the read.
  const events = new Map<number, BusEvent>();
  const missing: number[] = [];
  for (const r of take) {
    if (r.payload !== null) continue;
    const seq = Number(r.event_seq);
    const cached = cache.get(tenant, seq);
    if (cached) events.set(seq, cached);
    else missing.push(seq);
  }
  if (missing.length > 0) {
    for (const row of await tx
      .selectFrom('events')
      .select(EVENT_COLUMNS)
      .where('tenant_id', '=', tenant)
      .where('seq', 'in', missing)
      .execute()) {
      const event = eventFromRow(row);
      cache.set(event);
      events.set(Number(row.seq), event);
    }
  }
  const items: Claimed[] = [];
  const gone: string[] = [];
  for (const r of take) {
    const event = r.payload !== null ? (JSON.parse(r.payload) as BusEvent) : events.get(Number(r.event_seq));
    if (!event) {
      gone.push(r.id);
      continue;
    }
    items.push({ id: r.id, attempt: Number(r.attempts) + 1, event });
  }
  if (gone.length > 0) {
    await tx
      .updateTable('event_deliveries')
      .set({
        status: 'dead',
        lease_until: null,
        last_error: 'the event left the log (retention) before it was delivered',
        updated_at: nowTimestamp(),
      })
      .where('tenant_id', '=', tenant)
      .where('id', 'in', gone)
      .execute();
  }
  return { kind: 'claimed', leaseUntil, items };
}

/** What became of one claimed delivery: an attempt's outcome, or `release` (never attempted: back to `queued`, its attempt not counted). */
export interface Finish {
  id: string;
  attempt: number;
  leaseUntil: number;
  outcome: AttemptOutcome | 'release';
  maxAttempts: number;
  initialIntervalS: number;
}

/** The status an outcome leads to, and when the delivery is next due. */
export function nextStatus(
  f: Pick<Finish, 'attempt' | 'maxAttempts' | 'initialIntervalS'>,
  outcome: AttemptOutcome,
  now = Date.now(),
): { status: DeliveryStatus; due: number } {
  if (outcome.result === 'delivered') return { status: 'delivered', due: now };
  if (outcome.result === 'failed') return { status: 'failed', due: now };
  if (f.attempt >= f.maxAttempts) return { status: 'dead', due: now };
  return { status: 'queued', due: now + retryDelayMs(f.attempt, f.initialIntervalS, outcome.retryAfterMs) };
}

/**
 * Writes the finishes of one tenant: the delivered rows of one HTTP status in one UPDATE (whatever
 * lane or claim they came from), releases of one claim in one, the rest one by one. Returns each
 * row's new status.
 */
export async function finishBatch(tx: Tx, tenant: string, list: readonly Finish[]): Promise<Map<string, DeliveryStatus | 'released'>> {
  const now = nowTimestamp();
  const out = new Map<string, DeliveryStatus | 'released'>();
  const delivered = new Map<number | null, Finish[]>();
  const releases = new Map<number, string[]>();
  const single: Finish[] = [];
  for (const f of list) {
    if (f.outcome === 'release') {
      const ids = releases.get(f.leaseUntil);
      if (ids) ids.push(f.id);
      else releases.set(f.leaseUntil, [f.id]);
      out.set(f.id, 'released');
    } else if (f.outcome.result === 'delivered' && !f.outcome.error) {
      const key = f.outcome.status ?? null;
      const fs = delivered.get(key);
      if (fs) fs.push(f);
      else delivered.set(key, [f]);
      out.set(f.id, 'delivered');
    } else single.push(f);
  }
  const mine = (leaseUntil: number) => (eb: import('kysely').ExpressionBuilder<Database, 'event_deliveries'>) =>
    eb.and([eb('status', '=', 'delivering'), eb('lease_until', '=', leaseUntil)]);
  for (const [status, fs] of delivered) {
    for (let i = 0; i < fs.length; i += 500) {
      const chunk = fs.slice(i, i + 500);
      // Rows still under one of the claims that delivered them (a row another worker took over has a later lease).
      await tx
        .updateTable('event_deliveries')
        .set({ status: 'delivered', lease_until: null, last_status: status, last_error: null, updated_at: now, delivered_at: now })
        .where('tenant_id', '=', tenant)
        .where('id', 'in', chunk.map((f) => f.id))
        .where('status', '=', 'delivering')
        .where('lease_until', 'in', [...new Set(chunk.map((f) => f.leaseUntil))])
        .execute();
    }
  }
  for (const [leaseUntil, ids] of releases) {
    await tx
      .updateTable('event_deliveries')
      .set({ status: 'queued', attempts: sql<number>`attempts - 1`, lease_until: null, updated_at: now })
      .where('tenant_id', '=', tenant)
      .where('id', 'in', ids)
      .where(mine(leaseUntil))
      .execute();
  }
  for (const f of single) {
    const outcome = f.outcome as AttemptOutcome;
    const { status, due } = nextStatus(f, outcome);
    out.set(f.id, status);
    await tx
      .updateTable('event_deliveries')
      .set({
        status,
        due_at: due,
        lease_until: null,
        last_status: outcome.status ?? null,
        last_error: outcome.error?.slice(0, 500) ?? null,
        updated_at: now,
        delivered_at: status === 'delivered' ? now : null,
      })
      .where('tenant_id', '=', tenant)
      .where('id', '=', f.id)
      .where(mine(f.leaseUntil))
      .execute();
  }
  return out;
}

/**
 * Moves a claim's lease forward (a slow receiver: the rest of the batch must not lapse while it
 * waits); the new lease, or undefined when some row is no longer under the old one (taken over).
 */
export async function renewLease(
  tx: Tx,
  tenant: string,
  ids: readonly string[],
  from: number,
  leaseMs: number,
  now = Date.now(),
): Promise<number | undefined> {
  const to = Math.max(now + leaseMs, from + 1);
  const res = await tx
    .updateTable('event_deliveries')
    .set({ lease_until: to })
    .where('tenant_id', '=', tenant)
    .where('id', 'in', [...ids])
    .where('status', '=', 'delivering')
    .where('lease_until', '=', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === ids.length ? to : undefined;
}
