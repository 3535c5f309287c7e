/**
 * Durable delivery rows (`event_deliveries`, migration 23). A delivery is `queued` until a worker
 * claims it (`delivering`, with a lease: the worker's timeout plus a margin), then `delivered`,
 * `queued` again with a later `due_at` (a retry), `failed` (refused for good) or `dead` (out of
 * attempts). A claim whose lease ran out — its process died mid-attempt — is taken over, so a kill -9
 * leaves nothing stuck; the retry carries the same event id, so duplicates share one webhook-id.
 */
import { sql, type Transaction } from 'kysely';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { BusEvent } from '../event-types.js';
import type { AttemptOutcome } from './target.js';

type Tx = Transaction<Database>;

export const DELIVERY_STATUSES = ['queued', 'delivering', 'delivered', 'failed', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A delivery as the routes serve it. */
export interface Delivery {
  id: string;
  subscription_id: string;
  event_id: string;
  event_seq: number;
  kind: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

const COLUMNS = [
  'id',
  'subscription_id',
  'event_id',
  'event_seq',
  'kind',
  'status',
  'attempts',
  'due_at',
  'last_status',
  'last_error',
  'created_at',
  'updated_at',
  'delivered_at',
] as const;

type Row = {
  [K in (typeof COLUMNS)[number]]: Database['event_deliveries'][K] extends infer T ? (T extends { __select__: infer S } ? S : T) : never;
};

function toDelivery(r: Row): Delivery {
  const open = r.status === 'queued';
  return {
    id: r.id,
    subscription_id: r.subscription_id,
    event_id: r.event_id,
    event_seq: Number(r.event_seq),
    kind: r.kind,
    status: r.status,
    attempts: Number(r.attempts),
    next_attempt_at: open ? new Date(Number(r.due_at)).toISOString() : null,
    last_status: r.last_status === null ? null : Number(r.last_status),
    last_error: r.last_error,
    created_at: r.created_at,
    updated_at: r.updated_at,
    delivered_at: r.delivered_at,
  };
}

/** Queues first deliveries of `events` to one lane (an event already queued to it is skipped). */
export async function queueDeliveries(
  tx: Tx,
  tenant: string,
  laneId: string,
  events: readonly BusEvent[],
  kind: 'event' | 'replay' = 'event',
): Promise<number> {
  return queueMany(
    tx,
    tenant,
    events.map((event) => ({ laneId, event })),
    kind,
  );
}

/** Queues deliveries of events to lanes, many lanes at once (one dispatch of a tenant); an event already queued to a lane is skipped. */
export async function queueMany(
  tx: Tx,
  tenant: string,
  list: ReadonlyArray<{ laneId: string; event: BusEvent }>,
  kind: 'event' | 'replay' = 'event',
): Promise<number> {
  if (list.length === 0) return 0;
  const now = nowTimestamp();
  const due = Date.now();
  let n = 0;
  for (let i = 0; i < list.length; i += 500) {
    const rows = list
      .slice(i, i + 500)
      .map(({ laneId, event: e }) => ({
        id: newId(),
        tenant_id: tenant,
        subscription_id: laneId,
        event_id: e.id,
        event_seq: e.sequence ?? 0,
        kind,
        payload: null,
        status: 'queued',
        attempts: 0,
        due_at: due,
        lease_until: null,
        last_status: null,
        last_error: null,
        created_at: now,
        updated_at: now,
        delivered_at: null,
      }));
    let q = tx.insertInto('event_deliveries').values(rows);
    // A second dispatcher of the same lane (another replica) finds the rows there and adds nothing.
    if (kind === 'event')
      q = q.onConflict((oc) =>
        oc
          .columns(['subscription_id', 'event_id'])
          .where(sql<boolean>`kind = 'event'`)
          .doNothing(),
      );
    n += Number((await q.executeTakeFirst()).numInsertedOrUpdatedRows ?? 0);
  }
  return n;
}

/**
 * Queues first deliveries already claimed by the lane that will attempt them (`delivering`, first
 * attempt counted, under `leaseUntil`), as a claim would leave them; returns the ids of the rows
 * inserted (an event already queued to the lane is skipped, and not handed over).
 */
export async function queueClaimed(
  tx: Tx,
  tenant: string,
  list: ReadonlyArray<{ laneId: string; event: BusEvent; leaseUntil: number }>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const now = nowTimestamp();
  const due = Date.now();
  for (let i = 0; i < list.length; i += 500) {
    const rows = list.slice(i, i + 500).map(({ laneId, event: e, leaseUntil }) => ({
      id: newId(), tenant_id: tenant, subscription_id: laneId, event_id: e.id, event_seq: e.sequence ?? 0, kind: 'event', payload: null,
      status: 'delivering', attempts: 1, due_at: due, lease_until: leaseUntil, last_status: null, last_error: null,
      created_at: now, updated_at: now, delivered_at: null,
    }));
    const got = await tx
      .insertInto('event_deliveries')
      .values(rows)
      .onConflict((oc) => oc.columns(['subscription_id', 'event_id']).where(sql<boolean>`kind = 'event'`).doNothing())
      .returning(['id', 'subscription_id', 'event_id'])
      .execute();
    for (const r of got) out.set(`${r.subscription_id}:${r.event_id}`, r.id);
  }
  return out;
}

/** Records a finished delivery in one step (the synchronous test delivery). */
export async function recordFinished(
  tx: Tx,
  tenant: string,
  laneId: string,
  event: BusEvent,
  kind: 'test',
  outcome: AttemptOutcome,
): Promise<Delivery> {
  const now = nowTimestamp();
  const status = outcome.result === 'delivered' ? 'delivered' : 'failed';
  const row = {
    id: newId(),
    tenant_id: tenant,
    subscription_id: laneId,
    event_id: event.id,
    event_seq: 0,
    kind,
    payload: JSON.stringify(event),
    status,
    attempts: 1,
    due_at: Date.now(),
    lease_until: null,
    last_status: outcome.status ?? null,
    last_error: outcome.error?.slice(0, 500) ?? null,
    created_at: now,
    updated_at: now,
    delivered_at: status === 'delivered' ? now : null,
  };
  await tx.insertInto('event_deliveries').values(row).execute();
  return toDelivery(row as unknown as Row);
}

export interface DeliveryFilter {
  subscription_id?: string;
  status?: string;
  /** the last id of the previous page */
  after?: string;
  limit: number;
}

/** A page of a tenant's deliveries, newest first is not needed: id (creation) order, keyset. */
export async function listDeliveries(tx: Tx, tenant: string, f: DeliveryFilter): Promise<Delivery[]> {
  let q = tx.selectFrom('event_deliveries').select(COLUMNS).where('tenant_id', '=', tenant);
  if (f.subscription_id) q = q.where('subscription_id', '=', f.subscription_id);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.after) q = q.where('id', '>', f.after);
  return (await q.orderBy('id').limit(f.limit + 1).execute()).map((r) => toDelivery(r as Row));
}

/** Requeues one dead delivery (attempts start over); undefined when there is no such dead delivery. */
export async function redeliver(tx: Tx, tenant: string, id: string): Promise<Delivery | undefined> {
  const res = await tx
    .updateTable('event_deliveries')
    .set({ status: 'queued', attempts: 0, due_at: Date.now(), lease_until: null, updated_at: nowTimestamp() })
    .where('tenant_id', '=', tenant)
    .where('id', '=', id)
    .where('status', '=', 'dead')
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return undefined;
  const r = await tx
    .selectFrom('event_deliveries')
    .select(COLUMNS)
    .where('tenant_id', '=', tenant)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return toDelivery(r as Row);
}

/** One delivery of the tenant, or undefined. */
export async function getDelivery(tx: Tx, tenant: string, id: string): Promise<Delivery | undefined> {
  const r = await tx.selectFrom('event_deliveries').select(COLUMNS).where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
  return r ? toDelivery(r as Row) : undefined;
}

/** Open (queued or delivering) deliveries per lane, for stats. */
export async function queueDepth(tx: Tx, tenant: string): Promise<Map<string, number>> {
  const rows = await tx
    .selectFrom('event_deliveries')
    .select((eb) => ['subscription_id', eb.fn.countAll<number | string>().as('n')])
    .where('tenant_id', '=', tenant)
    .where('status', 'in', ['queued', 'delivering'])
    .groupBy('subscription_id')
    .execute();
  return new Map(rows.map((r) => [r.subscription_id, Number(r.n)]));
}
