/**
 * A connector's lanes on the delivery engine (src/events/delivery): one lane per (connector, tenant,
 * source). `dispatch` turns a *range* of the source into ONE delivery row — up to `maxBatch` ledger
 * seqs, or the events of a range of the event log that pass the connector's filter — so the ledger
 * forwarder costs one row per batch, not per record. The row's `payload` names the range
 * (`{source, from, to, skip}`); the claim hands it to {@link BatchTarget}, which reads the range,
 * encodes it with the shared encoders and hands it to the kind's sink. Rows sit in the tenant's
 * `event_deliveries` with `event_seq` = the range's first seq, so the engine's head-first order is
 * seq order and the retry ladder, `dead`, redelivery and the deliveries listing are the eventing ones.
 */
import type { Transaction } from 'kysely';
import { sql } from 'kysely';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { BusEvent } from '../../events/event-types.js';

type Tx = Transaction<Database>;

export type BatchSource = 'ledger' | 'events';

/** What a connector delivery row carries: a seq range of one source, minus items moved out of it. */
export interface BatchRange {
  source: BatchSource;
  from: number;
  to: number;
  /** seqs moved into deliveries of their own (a record the sink can never take) */
  skip?: number[];
  /** a single record split out of a batch, or refused by the receiver */
  single?: boolean;
}

export const BATCH_EVENT_TYPE = 'connector.batch';

/** The envelope a connector delivery row stores as its payload (the engine hands it back at claim time). */
export function batchEnvelope(tenant: string, laneId: string, range: BatchRange): BusEvent {
  return {
    id: newId(),
    tenant,
    type: BATCH_EVENT_TYPE,
    source: '/svc/connectors',
    subject: `lane/${laneId}`,
    time: nowTimestamp(),
    sequence: range.from,
    data: { ...range },
  };
}

export function rangeOf(e: BusEvent): BatchRange {
  const d = e.data as Partial<BatchRange>;
  return {
    source: d.source === 'events' ? 'events' : 'ledger',
    from: Number(d.from),
    to: Number(d.to),
    ...(Array.isArray(d.skip) ? { skip: d.skip.map(Number) } : {}),
    ...(d.single ? { single: true } : {}),
  };
}

/** Inserts one delivery row of a lane for a range; `status` `failed` records a refused record at once. */
export async function insertBatch(
  tx: Tx,
  tenant: string,
  laneId: string,
  range: BatchRange,
  status: 'queued' | 'failed' = 'queued',
  error: string | null = null,
): Promise<string> {
  const now = nowTimestamp();
  const env = batchEnvelope(tenant, laneId, range);
  await tx
    .insertInto('event_deliveries')
    .values({
      id: newId(),
      tenant_id: tenant,
      subscription_id: laneId,
      event_id: env.id,
      event_seq: range.from,
      kind: 'event',
      payload: JSON.stringify(env),
      status,
      attempts: status === 'failed' ? 1 : 0,
      due_at: Date.now(),
      lease_until: null,
      last_status: null,
      last_error: error?.slice(0, 500) ?? null,
      created_at: now,
      updated_at: now,
      delivered_at: null,
    })
    .execute();
  return env.id;
}

/** Rewrites a batch row's range (items split out of it), so a retry does not split them again. */
export async function rewriteBatch(tx: Tx, tenant: string, deliveryId: string, e: BusEvent, range: BatchRange): Promise<void> {
  await tx
    .updateTable('event_deliveries')
    .set({ payload: JSON.stringify({ ...e, data: { ...range } }) })
    .where('tenant_id', '=', tenant)
    .where('id', '=', deliveryId)
    .execute();
}

/** Moves a lane's delivered mark forward (never back: batches of a retried head may finish out of order). */
export async function markDelivered(tx: Tx, tenant: string, laneId: string, upto: number): Promise<void> {
  await tx
    .updateTable('connector_cursors')
    .set({
      delivered_seq: sql<number>`case when delivered_seq < ${upto} then ${upto} else delivered_seq end`,
      delivered_at: nowTimestamp(),
    })
    .where('tenant_id', '=', tenant)
    .where('id', '=', laneId)
    .execute();
}

/** The lane's cursor row, created at 0 on first sight (a new connector forwards the chain from its first record). */
export async function ensureCursor(tx: Tx, tenant: string, connectorId: string, source: BatchSource): Promise<string> {
  const cur = await tx
    .selectFrom('connector_cursors')
    .select('id')
    .where('tenant_id', '=', tenant)
    .where('connector_id', '=', connectorId)
    .where('source', '=', source)
    .executeTakeFirst();
  if (cur) return cur.id;
  const id = newId();
  await tx
    .insertInto('connector_cursors')
    .values({
      id,
      tenant_id: tenant,
      connector_id: connectorId,
      source,
      cursor_seq: 0,
      delivered_seq: 0,
      delivered_at: null,
      created_at: nowTimestamp(),
    })
    .onConflict((oc) => oc.columns(['connector_id', 'tenant_id', 'source']).doNothing())
    .execute();
  const again = await tx
    .selectFrom('connector_cursors')
    .select('id')
    .where('tenant_id', '=', tenant)
    .where('connector_id', '=', connectorId)
    .where('source', '=', source)
    .executeTakeFirstOrThrow();
  return again.id;
}
