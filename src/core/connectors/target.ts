/**
 * The delivery target of a connector lane: one attempt at one batch row. It re-checks every secret
 * reference first (a deleted secret fails closed: nothing is read or sent, the connector turns
 * `failed`), reads the row's range, encodes each record with the shared encoders (ledger records
 * through `encodeRecord`, so integrity fields ride verbatim), moves any record the sink can never take
 * into a delivery of its own (retried, then dead), and hands the rest to the kind's sink in one call.
 * Records the receiver refuses inside an accepted batch become `failed` deliveries of their own.
 */
import type { Encoder } from '../../encoders/encoder.js';
import { ledgerDevice } from '../../encoders/ledger-fields.js';
import { readEvents } from '../../events/event-log.js';
import type { AttemptOutcome, DeliveryJob, DeliveryTarget } from '../../events/delivery/target.js';
import type { Store } from '../../store/store.js';
import { SecretUnavailableError } from '../console/secrets-service.js';
import { insertBatch, markDelivered, rangeOf, rewriteBatch } from './batches.js';
import type { ConnectorView } from './connector-store.js';
import { ledgerItems } from './ledger-items.js';
import { egressEvent, passesSeverity } from './egress-event.js';
import type { ConnectorSink, SinkItem, SinkResult } from './kinds/types.js';

/** What a target needs from the runtime (kept narrow so the target is testable on its own). */
export interface TargetHost {
  store: Store;
  version: string;
  /** throws SecretUnavailableError when a reference no longer resolves */
  checkSecrets(conn: ConnectorView): Promise<void>;
  /** the connector's open sink, serialised: `fn` runs alone on it */
  withSink<T>(conn: ConnectorView, fn: (sink: ConnectorSink) => Promise<T>): Promise<T>;
  encoder(conn: ConnectorView): Encoder;
  failed(conn: ConnectorView, reason: string): void;
  attempted(conn: ConnectorView, ok: boolean, error: string | undefined, records: number): void;
  sendTimeoutMs: number;
}

export class BatchTarget implements DeliveryTarget {
  constructor(
    readonly host: TargetHost,
    readonly conn: ConnectorView,
    readonly tenant: string,
    readonly laneId: string,
  ) {}

  async send(job: DeliveryJob): Promise<AttemptOutcome> {
    const { host, conn, tenant, laneId } = this;
    try {
      await host.checkSecrets(conn);
    } catch (err) {
      if (err instanceof SecretUnavailableError) {
        host.failed(conn, err.message);
        return { result: 'retry', error: err.message, retryAfterMs: 2_000 };
      }
      throw err;
    }
    const range = rangeOf(job.event);
    let items: SinkItem[];
    try {
      items = await this.#read(range);
    } catch (err) {
      const msg = `encoding failed: ${(err as Error).message}`;
      host.failed(conn, msg);
      return { result: 'failed', error: msg };
    }
    let bad: Array<{ item: SinkItem; why: string }> = [];
    const res = await host.withSink(conn, async (sink): Promise<SinkResult> => {
      if (sink.check) bad = items.flatMap((item) => {
        const why = sink.check?.(item);
        return why === undefined ? [] : [{ item, why }];
      });
      if (bad.length > 0) {
        // A lone record the sink cannot take fails its own delivery (retried, then dead), never sent.
        if (range.single || items.length === 1) return { result: 'retry', error: bad[0]?.why ?? 'refused' };
        const skip = new Set(bad.map((b) => b.item.seq as number));
        await host.store.withTenant(tenant, async (tx) => {
          for (const b of bad)
            await insertBatch(tx, tenant, laneId, {
              source: range.source,
              from: b.item.seq as number,
              to: b.item.seq as number,
              single: true,
            });
          await rewriteBatch(tx, tenant, job.deliveryId, job.event, { ...range, skip: [...(range.skip ?? []), ...skip] });
        });
        items = items.filter((i) => !skip.has(i.seq as number));
        if (items.length === 0) return { result: 'delivered' };
      }
      if (items.length === 0) return { result: 'delivered' };
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), host.sendTimeoutMs);
      try {
        return await sink.send(items, ac.signal);
      } finally {
        clearTimeout(timer);
      }
    }).catch((err: unknown): SinkResult => {
      if (err instanceof SecretUnavailableError) {
        host.failed(conn, err.message);
        return { result: 'retry', error: err.message, retryAfterMs: 2_000 };
      }
      return { result: 'retry', error: (err as Error).message };
    });
    if (res.result === 'delivered') {
      if (res.rejected && res.rejected.length > 0) {
        await host.store.withTenant(tenant, async (tx) => {
          for (const r of res.rejected ?? []) {
            const it = items[r.index];
            if (it?.seq !== undefined)
              await insertBatch(
                tx,
                tenant,
                laneId,
                { source: range.source, from: it.seq, to: it.seq, single: true },
                'failed',
                `refused by the receiver: ${r.error}`,
              );
          }
        });
      }
      if (range.source === 'ledger') await host.store.withTenant(tenant, (tx) => markDelivered(tx, tenant, laneId, range.to));
      else await host.store.withTenant(tenant, (tx) => markDelivered(tx, tenant, laneId, range.to));
    }
    host.attempted(conn, res.result === 'delivered', res.error, res.result === 'delivered' ? items.length : 0);
    const out: AttemptOutcome = { result: res.result };
    if (res.status !== undefined) out.status = res.status;
    if (res.error !== undefined) out.error = res.error;
    if (res.retryAfterMs !== undefined) out.retryAfterMs = res.retryAfterMs;
    if (res.result === 'delivered' && res.rejected?.length)
      out.error = `${res.rejected.length} record(s) refused by the receiver (failed deliveries of their own)`;
    return out;
  }

  async #read(range: ReturnType<typeof rangeOf>): Promise<SinkItem[]> {
    const { host, conn, tenant } = this;
    const enc = host.encoder(conn);
    const skip = new Set(range.skip ?? []);
    const opts = { device: ledgerDevice(host.version) };
    if (range.source === 'ledger') return ledgerItems(host.store, tenant, range.from, range.to, skip, enc, opts);
    const ev = conn.sources.events;
    if (!ev) return [];
    if (!enc.encodeEvent) throw new Error(`format ${conn.format} cannot encode events`);
    const encode = enc.encodeEvent.bind(enc);
    const events = await host.store.withTenant(tenant, (tx) =>
      readEvents(tx, tenant, range.from - 1, range.to - range.from + 1, ev.types, range.to),
    );
    return events
      .filter((e) => passesSeverity(e, ev.min_severity) && !skip.has(e.sequence ?? 0))
      .map((e) => ({ line: encode(egressEvent(e), opts), id: e.id, tenant, seq: e.sequence ?? 0, time: e.time }));
  }
}
