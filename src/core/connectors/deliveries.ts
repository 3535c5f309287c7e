/**
 * A connector's delivery batches over all its lanes (every tenant it runs for, and the system chain):
 * the listing of `GET /v1/console/connectors?name=&deliveries=` and the redelivery of dead batches
 * (`POST /v1/console/connectors/redeliver`). A redelivered batch is the eventing redelivery of one
 * row (delivery-store.ts `redeliver`): back to `queued`, attempts from zero, due now, its payload
 * (the seq range, minus records split out of it) untouched, so it is read and encoded afresh.
 */
import type { Static } from 'typebox';
import type { Transaction } from 'kysely';
import { getDelivery, listDeliveries, redeliver, type Delivery } from '../../events/delivery/delivery-store.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import { rangeOf } from './batches.js';
import { laneTenants } from './connector-store.js';
import type { DeliveryOut } from './schemas.js';

type Tx = Transaction<Database>;
export type DeliveryView = Static<typeof DeliveryOut>;

/** Lanes of a connector on one chain: lane id → source. */
async function lanesOn(tx: Tx, tenant: string, connectorId: string): Promise<Map<string, string>> {
  const rows = await tx
    .selectFrom('connector_cursors')
    .select(['id', 'source'])
    .where('tenant_id', '=', tenant)
    .where('connector_id', '=', connectorId)
    .execute();
  return new Map(rows.map((r) => [r.id, r.source]));
}

/** Delivery rows with the tenant and seq range their payload names. */
async function views(tx: Tx, tenant: string, lanes: Map<string, string>, rows: Delivery[]): Promise<DeliveryView[]> {
  if (rows.length === 0) return [];
  const payloads = new Map(
    (
      await tx
        .selectFrom('event_deliveries')
        .select(['id', 'payload'])
        .where('tenant_id', '=', tenant)
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute()
    ).map((p) => [p.id, p.payload]),
  );
  return rows.map((r) => {
    const p = payloads.get(r.id);
    const range = p
      ? rangeOf(JSON.parse(p) as Parameters<typeof rangeOf>[0])
      : { source: lanes.get(r.subscription_id) ?? 'ledger', from: r.event_seq, to: r.event_seq };
    return { ...r, tenant, source: range.source, from_seq: range.from, to_seq: range.to };
  });
}

/** The deliveries of a connector over all its lanes (the eventing listing shape, plus tenant and range). */
export async function connectorDeliveries(
  store: Store,
  connectorId: string,
  status: string | undefined,
  limit: number,
): Promise<DeliveryView[]> {
  const out: DeliveryView[] = [];
  for (const tenant of await laneTenants(store, true)) {
    await store.withTenant(tenant, async (tx) => {
      const lanes = await lanesOn(tx, tenant, connectorId);
      for (const lane of lanes.keys()) {
        const rows = await listDeliveries(tx, tenant, { subscription_id: lane, limit, ...(status ? { status } : {}) });
        out.push(...(await views(tx, tenant, lanes, rows)));
      }
    });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit);
}

/** Why one batch cannot be redelivered. */
export type RedeliverRefusal = { kind: 'not-found' } | { kind: 'not-dead'; status: string };

/**
 * Requeues the connector's dead batches — one (`batchId`) or all — and returns them as they are now
 * (`queued`, attempts 0), in seq order per chain; the chains whose lanes got work, to wake them.
 */
export async function redeliverBatches(
  store: Store,
  connectorId: string,
  batchId: string | undefined,
): Promise<{ requeued: DeliveryView[]; chains: string[] } | RedeliverRefusal> {
  const requeued: DeliveryView[] = [];
  const chains: string[] = [];
  let refusal = { kind: 'not-found' } as RedeliverRefusal;
  for (const tenant of await laneTenants(store, true)) {
    const got = await store.withTenant(tenant, async (tx) => {
      const lanes = await lanesOn(tx, tenant, connectorId);
      if (lanes.size === 0) return [];
      let ids: string[];
      if (batchId !== undefined) {
        const d = await getDelivery(tx, tenant, batchId);
        if (!d || !lanes.has(d.subscription_id)) return [];
        if (d.status !== 'dead') {
          refusal = { kind: 'not-dead', status: d.status };
          return [];
        }
        ids = [d.id];
      } else {
        ids = (
          await tx
            .selectFrom('event_deliveries')
            .select('id')
            .where('tenant_id', '=', tenant)
            .where('subscription_id', 'in', [...lanes.keys()])
            .where('status', '=', 'dead')
            .orderBy('event_seq')
            .orderBy('id')
            .execute()
        ).map((r) => r.id);
      }
      const rows: Delivery[] = [];
      for (const id of ids) {
        const r = await redeliver(tx, tenant, id);
        if (r) rows.push(r);
      }
      return views(tx, tenant, lanes, rows);
    });
    if (got.length > 0) chains.push(tenant);
    requeued.push(...got);
    if (batchId !== undefined && (got.length > 0 || refusal.kind === 'not-dead')) break;
  }
  if (batchId !== undefined && requeued.length === 0) return refusal;
  return { requeued, chains };
}
