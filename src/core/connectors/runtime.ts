/**
 * Output connectors at run time: the delivery engine (src/events/delivery, the one webhooks run on)
 * with one lane per (enabled connector, tenant in its scope, source). A connector whose secret
 * reference no longer resolves, whose kind or format is unknown, or whose sink cannot open is
 * `failed` with the reason and gets no lane at all (fails closed: nothing claimed, nothing sent);
 * the reload every few seconds brings it back once the cause is gone, from its durable cursor.
 * Lanes of one connector share one sink (one persistent connection), one batch at a time. An
 * all-tenants connector with `sources.system` has one more ledger lane over the system chain.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { SURFACES, encoderFor, type Surface } from '../../encoders/registry.js';
import type { Encoder } from '../../encoders/encoder.js';
import type { EventBus } from '../../events/bus.js';
import { lastSeq, readEvents } from '../../events/event-log.js';
import { DeliveryEngine } from '../../events/delivery/engine.js';
import type { Lane } from '../../events/delivery/target.js';
import { readHead } from '../../ledger/ledger-store.js';
import { SYSTEM_TENANT } from '../../ledger/record.js';
import { nowTimestamp } from '../../ledger/time.js';
import type { Sealer } from '../../secrets/sealing.js';
import type { Store } from '../../store/store.js';
import { resolveSecret, SecretUnavailableError } from '../console/secrets-service.js';
import { ensureCursor, insertBatch, type BatchSource } from './batches.js';
import { listConnectors, type ConnectorView } from './connector-store.js';
import { passesSeverity } from './egress-event.js';
import { kindOf, type ConnectorKind, type ConnectorSink, type KindContext } from './kinds/index.js';
import { BatchTarget, type TargetHost } from './target.js';
import { ConnectorMetrics } from './metrics.js';

export interface ConnectorRuntimeOptions {
  store: Store;
  sealer: Sealer;
  bus?: EventBus;
  log: Logger;
  version: string;
  dataDir: string;
  registry?: Registry;
  pollMs?: number;
  reloadMs?: number;
  /** largest ledger range per delivery row (capped by the kind's maxBatch) */
  batchSize?: number;
}

/** What the runtime knows of a connector beyond the store. */
export interface ConnectorState {
  failed: string | null;
  last_error: string | null;
  last_error_at: string | null;
  last_success_at: string | null;
  delivered_records: number;
  lanes: number;
}

interface SinkHolder {
  revision: number;
  sink: Promise<ConnectorSink>;
  queue: Promise<unknown>;
}

const DISPATCH_ROWS = 20;
const EVENT_BATCH = 1000;

/** The surface a kind's stored format token is encoded on (a fixed token: the surface that lists it). */
export function surfaceOf(kind: ConnectorKind): Surface {
  if ('surface' in kind.format) return kind.format.surface;
  const fixed = kind.format.fixed;
  const s = (Object.keys(SURFACES) as Surface[]).find((x) => SURFACES[x].tokens.includes(fixed));
  if (!s) throw new Error(`connector kind ${kind.kind}: fixed format ${fixed} is on no surface`);
  return s;
}

export class ConnectorRuntime implements TargetHost {
  readonly engine: DeliveryEngine;
  readonly store: Store;
  readonly version: string;
  readonly sendTimeoutMs = 10_000;
  readonly metrics: ConnectorMetrics | undefined;
  readonly #o: ConnectorRuntimeOptions;
  readonly #state = new Map<string, ConnectorState>();
  readonly #sinks = new Map<string, SinkHolder>();
  #unsubscribe: (() => void) | undefined;
  #started = false;
  /** bumped by every failure, so a reload that began before it cannot clear it */
  #generation = 0;
  readonly #failedGen = new Map<string, number>();

  constructor(o: ConnectorRuntimeOptions) {
    this.#o = o;
    this.store = o.store;
    this.version = o.version;
    this.engine = new DeliveryEngine({
      store: o.store,
      log: o.log,
      loadLanes: () => this.#loadLanes(),
      pollMs: o.pollMs ?? 1_000,
      reloadMs: o.reloadMs ?? 3_000,
    });
    this.metrics = o.registry ? new ConnectorMetrics(o.registry) : undefined;
  }

  get running(): boolean {
    return this.#started;
  }

  async start(): Promise<void> {
    if (this.#o.bus) this.#unsubscribe = this.#o.bus.subscribe({ name: 'connectors', types: '*' }, (e) => this.engine.wake(e.tenant));
    await this.engine.start();
    this.#started = true;
  }

  async close(): Promise<void> {
    this.#started = false;
    this.#unsubscribe?.();
    await this.engine.close();
    for (const h of this.#sinks.values()) await h.sink.then((s) => s.close()).catch(() => undefined);
    this.#sinks.clear();
  }

  /** Reload lanes now (after a configuration change). */
  refresh(): Promise<void> {
    return this.engine.refresh();
  }

  /** Enabled connectors that deliver nothing now (for /status). */
  failedCount(): number {
    let n = 0;
    for (const s of this.#state.values()) if (s.failed !== null) n++;
    return n;
  }

  state(id: string): ConnectorState | undefined {
    return this.#state.get(id);
  }

  #st(id: string): ConnectorState {
    let s = this.#state.get(id);
    if (!s)
      this.#state.set(
        id,
        (s = { failed: null, last_error: null, last_error_at: null, last_success_at: null, delivered_records: 0, lanes: 0 }),
      );
    return s;
  }

  kindContext(): KindContext {
    const { store, sealer, log, dataDir, version } = this.#o;
    return {
      secret: (ref) => resolveSecret(store, sealer, ref),
      dataDir,
      version,
      log: { warn: (o, m) => log.warn(o, m), info: (o, m) => log.info(o, m) },
    };
  }

  async checkSecrets(conn: ConnectorView): Promise<void> {
    for (const ref of conn.secret_refs) await resolveSecret(this.#o.store, this.#o.sealer, ref);
  }

  encoder(conn: ConnectorView): Encoder {
    const kind = kindOf(conn.kind);
    if (!kind) throw new Error(`unknown connector kind ${conn.kind}`);
    return encoderFor(surfaceOf(kind), conn.format);
  }

  async withSink<T>(conn: ConnectorView, fn: (sink: ConnectorSink) => Promise<T>): Promise<T> {
    let h = this.#sinks.get(conn.id);
    if (!h || h.revision !== conn.version) {
      const old = h;
      const kind = kindOf(conn.kind);
      if (!kind) throw new Error(`unknown connector kind ${conn.kind}`);
      h = {
        revision: conn.version,
        sink: kind.open(conn.config, this.kindContext()),
        queue: old ? old.queue.catch(() => undefined) : Promise.resolve(),
      };
      h.sink.catch(() => undefined);
      this.#sinks.set(conn.id, h);
      if (old) void old.queue.finally(() => old.sink.then((s) => s.close()).catch(() => undefined));
    }
    const holder = h;
    const run = holder.queue.catch(() => undefined).then(async () => fn(await holder.sink));
    holder.queue = run.catch(() => undefined);
    return run.catch(async (err: unknown) => {
      // A sink that failed to open is opened again next time.
      if (this.#sinks.get(conn.id) === holder && (await holder.sink.then(() => false, () => true))) this.#sinks.delete(conn.id);
      throw err;
    });
  }

  failed(conn: ConnectorView, reason: string): void {
    const s = this.#st(conn.id);
    const was = s.failed;
    s.failed = reason;
    this.#failedGen.set(conn.id, ++this.#generation);
    s.last_error = reason;
    s.last_error_at = nowTimestamp();
    if (was === null) {
      this.#o.log.error({ connector: conn.name, reason }, 'connector failed; it delivers nothing until the cause is fixed');
      // Drop its lanes now: nothing more is claimed for it.
      void this.engine.refresh().catch(() => undefined);
    }
  }

  attempted(conn: ConnectorView, ok: boolean, error: string | undefined, records: number): void {
    const s = this.#st(conn.id);
    if (ok) {
      s.last_success_at = nowTimestamp();
      s.delivered_records += records;
      this.metrics?.delivered(conn.name, records);
    } else {
      s.last_error = error ?? 'not delivered';
      s.last_error_at = nowTimestamp();
      this.metrics?.attemptFailed(conn.name);
    }
  }

  async #usable(conn: ConnectorView): Promise<string | null> {
    const kind = kindOf(conn.kind);
    if (!kind) return `unknown connector kind ${conn.kind} (this build knows it not)`;
    try {
      encoderFor(surfaceOf(kind), conn.format);
    } catch (err) {
      return (err as Error).message;
    }
    try {
      await this.checkSecrets(conn);
    } catch (err) {
      if (err instanceof SecretUnavailableError) return err.message;
      throw err;
    }
    return null;
  }

  async #loadLanes(): Promise<Lane[]> {
    const { store } = this.#o;
    const gen = this.#generation;
    const conns = await listConnectors(store);
    const tenants = (await store.transaction((tx) => tx.selectFrom('tenants').select('id').where('deleted_at', 'is', null).execute())).map(
      (t) => t.id,
    );
    const lanes: Lane[] = [];
    const live = new Set<string>();
    for (const conn of conns) {
      if (!conn.enabled) {
        this.#state.delete(conn.id);
        continue;
      }
      live.add(conn.id);
      const st = this.#st(conn.id);
      const why = await this.#usable(conn);
      if (why !== null) {
        if (st.failed === null)
          this.#o.log.error({ connector: conn.name, reason: why }, 'connector failed; it delivers nothing until the cause is fixed');
        st.failed = why;
        st.lanes = 0;
        continue;
      }
      // A failure reported while this reload ran stands until the next reload looks again.
      if (st.failed !== null && (this.#failedGen.get(conn.id) ?? 0) > gen) continue;
      if (st.failed !== null) this.#o.log.info({ connector: conn.name }, 'connector resumes from its cursor');
      st.failed = null;
      let n = 0;
      for (const tenant of conn.tenant ? tenants.filter((t) => t === conn.tenant) : tenants) {
        const sources: BatchSource[] = [
          ...(conn.sources.ledger ? ['ledger' as const] : []),
          ...(conn.sources.events ? ['events' as const] : []),
        ];
        for (const source of sources) {
          const laneId = await store.withTenant(tenant, (tx) => ensureCursor(tx, tenant, conn.id, source));
          lanes.push(this.#lane(conn, tenant, source, laneId));
          n++;
        }
      }
      // The system chain: one more ledger lane, its rows under the system chain's id (migration 32), RLS as for a tenant.
      if (conn.sources.system && conn.tenant === null) {
        const laneId = await store.withTenant(SYSTEM_TENANT, (tx) => ensureCursor(tx, SYSTEM_TENANT, conn.id, 'ledger'));
        lanes.push(this.#lane(conn, SYSTEM_TENANT, 'ledger', laneId));
        n++;
      }
      st.lanes = n;
    }
    for (const [id, h] of this.#sinks) {
      if (!live.has(id) || this.#state.get(id)?.failed) {
        this.#sinks.delete(id);
        void h.queue.finally(() => h.sink.then((s) => s.close()).catch(() => undefined));
      }
    }
    for (const id of this.#state.keys()) if (!conns.some((c) => c.id === id)) this.#state.delete(id);
    return lanes;
  }

  #lane(conn: ConnectorView, tenant: string, source: BatchSource, laneId: string): Lane {
    const kind = kindOf(conn.kind) as ConnectorKind;
    const batch = Math.max(1, Math.min(kind.maxBatch, this.#o.batchSize ?? 5000));
    const concurrent = this.#o.store.capabilities.supportsConcurrentWriters;
    return {
      id: laneId,
      tenant,
      name: `connector:${conn.name}`,
      maxAttempts: conn.max_attempts,
      initialIntervalS: conn.initial_interval_s,
      leaseMs: this.sendTimeoutMs + 5_000,
      revision: `${conn.version}`,
      target: new BatchTarget(this, conn, tenant, laneId),
      dispatch: async (tx) => {
        let q = tx.selectFrom('connector_cursors').select('cursor_seq').where('tenant_id', '=', tenant).where('id', '=', laneId);
        // Two replicas dispatching one lane take turns on Postgres; SQLite has one writer anyway.
        if (concurrent) q = q.forUpdate();
        const cur = await q.executeTakeFirst();
        if (!cur) return { queued: 0, more: false };
        const cursor = Number(cur.cursor_seq);
        if (source === 'ledger') {
          const head = (await readHead(tx, tenant))?.seq ?? 0;
          let from = cursor + 1;
          let rows = 0;
          while (from <= head && rows < DISPATCH_ROWS) {
            const to = Math.min(head, from + batch - 1);
            await insertBatch(tx, tenant, laneId, { source, from, to });
            from = to + 1;
            rows++;
          }
          if (rows > 0)
            await tx
              .updateTable('connector_cursors')
              .set({ cursor_seq: from - 1 })
              .where('tenant_id', '=', tenant)
              .where('id', '=', laneId)
              .execute();
          return { queued: rows, more: from <= head };
        }
        const ev = conn.sources.events;
        const upto = await lastSeq(tx, tenant);
        if (!ev || upto <= cursor) return { queued: 0, more: false };
        const events = await readEvents(tx, tenant, cursor, Math.min(EVENT_BATCH, batch), ev.types, upto);
        const more = events.length === Math.min(EVENT_BATCH, batch);
        const next = more ? (events[events.length - 1]?.sequence ?? upto) : upto;
        const pass = events.filter((e) => passesSeverity(e, ev.min_severity));
        const first = pass[0]?.sequence;
        const last = pass[pass.length - 1]?.sequence;
        if (first !== undefined && last !== undefined) await insertBatch(tx, tenant, laneId, { source, from: first, to: last });
        await tx
          .updateTable('connector_cursors')
          .set({ cursor_seq: next })
          .where('tenant_id', '=', tenant)
          .where('id', '=', laneId)
          .execute();
        return { queued: first !== undefined ? 1 : 0, more };
      },
    };
  }
}
