/**
 * Connector health (`GET /v1/connectors/health`, the console's health summary, `svc connector health`,
 * the lag metrics): per connector its state — `running` (lanes on the delivery engine), `failed`
 * (a deleted secret, an unknown kind or format: nothing is sent; the reason says why), `stopped`
 * (enabled but not running in this process: no runtime, or not loaded yet), `disabled` — with the
 * last success, the last error, the forwarder's lag (records and seconds, the largest over its
 * tenants and the system chain), dead letters and records the receiver refused; and a summary. The
 * system chain's lane is listed with the system chain's id as its tenant.
 */
import { readHead, readRange } from '../../ledger/ledger-store.js';
import { SYSTEM_TENANT } from '../../ledger/record.js';
import type { Store } from '../../store/store.js';
import { listConnectors, type ConnectorView } from './connector-store.js';
import type { MetricsSource } from './metrics.js';
import type { ConnectorRuntime } from './runtime.js';

export interface LaneHealth {
  tenant: string;
  source: 'ledger' | 'events';
  lane_id: string;
  cursor_seq: number;
  delivered_seq: number;
  head_seq: number;
  lag_records: number;
  lag_seconds: number;
  queued: number;
  dead: number;
  failed: number;
  delivered_at: string | null;
}

export interface ConnectorHealth {
  name: string;
  kind: string;
  tenant: string | null;
  state: 'running' | 'failed' | 'stopped' | 'disabled';
  reason: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  lag: { records: number; seconds: number };
  dead_letters: number;
  failed_records: number;
  queued: number;
  lanes: LaneHealth[];
}

export interface HealthReport {
  summary: {
    total: number;
    running: number;
    failed: number;
    stopped: number;
    disabled: number;
    dead_letters: number;
    max_lag_records: number;
    max_lag_seconds: number;
  };
  items: ConnectorHealth[];
}

async function laneHealth(store: Store, conn: ConnectorView, tenant: string): Promise<LaneHealth[]> {
  return store.withTenant(tenant, async (tx) => {
    const cursors = await tx
      .selectFrom('connector_cursors')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .where('connector_id', '=', conn.id)
      .orderBy('source')
      .execute();
    const out: LaneHealth[] = [];
    for (const c of cursors) {
      const counts = await tx
        .selectFrom('event_deliveries')
        .select((eb) => ['status', eb.fn.countAll<number | string>().as('n')])
        .where('tenant_id', '=', tenant)
        .where('subscription_id', '=', c.id)
        .where('status', 'in', ['queued', 'delivering', 'dead', 'failed'])
        .groupBy('status')
        .execute();
      const n = (s: string): number => Number(counts.find((x) => x.status === s)?.n ?? 0);
      const delivered = Number(c.delivered_seq);
      let head = Number(c.cursor_seq);
      let lagSeconds = 0;
      if (c.source === 'ledger') {
        head = (await readHead(tx, tenant))?.seq ?? 0;
        if (head > delivered) {
          const next = (await readRange(tx, tenant, delivered + 1, delivered + 1, 1))[0];
          const t = next ? Date.parse(next.occurred_at) : NaN;
          if (!Number.isNaN(t)) lagSeconds = Math.max(0, (Date.now() - t) / 1000);
        }
      }
      out.push({
        tenant,
        source: c.source === 'events' ? 'events' : 'ledger',
        lane_id: c.id,
        cursor_seq: Number(c.cursor_seq),
        delivered_seq: delivered,
        head_seq: head,
        lag_records: c.source === 'ledger' ? Math.max(0, head - delivered) : n('queued') + n('delivering'),
        lag_seconds: Math.round(lagSeconds * 1000) / 1000,
        queued: n('queued') + n('delivering'),
        dead: n('dead'),
        failed: n('failed'),
        delivered_at: c.delivered_at,
      });
    }
    return out;
  });
}

/** Health of every connector (and of one, by name, when `only` is given). */
export async function connectorHealth(store: Store, runtime: ConnectorRuntime | undefined, only?: string): Promise<HealthReport> {
  const conns = (await listConnectors(store)).filter((c) => only === undefined || c.name === only);
  const tenants = (await store.transaction((tx) => tx.selectFrom('tenants').select('id').where('deleted_at', 'is', null).execute())).map(
    (t) => t.id,
  );
  const items: ConnectorHealth[] = [];
  for (const conn of conns) {
    const lanes: LaneHealth[] = [];
    const chains = conn.tenant ? [conn.tenant] : [...tenants, ...(conn.sources.system ? [SYSTEM_TENANT] : [])];
    for (const t of chains) lanes.push(...(await laneHealth(store, conn, t)));
    const st = runtime?.state(conn.id);
    let state: ConnectorHealth['state'];
    if (!conn.enabled) state = 'disabled';
    else if (st?.failed) state = 'failed';
    else if (runtime?.running && st && st.lanes > 0) state = 'running';
    else state = 'stopped';
    const lastDelivered = lanes.map((l) => l.delivered_at).filter((x): x is string => x !== null).sort().pop() ?? null;
    items.push({
      name: conn.name,
      kind: conn.kind,
      tenant: conn.tenant,
      state,
      reason:
        state === 'failed'
          ? (st?.failed ?? null)
          : state === 'stopped'
            ? runtime?.running
              ? 'no lane runs yet (no tenant in scope, or not loaded yet)'
              : 'the connector runtime is not running in this process'
            : null,
      last_success_at:
        [st?.last_success_at ?? null, lastDelivered]
          .filter((x): x is string => x !== null)
          .sort()
          .pop() ?? null,
      last_error: st?.last_error ?? null,
      last_error_at: st?.last_error_at ?? null,
      lag: {
        records: lanes.filter((l) => l.source === 'ledger').reduce((m, l) => Math.max(m, l.lag_records), 0),
        seconds: lanes.reduce((m, l) => Math.max(m, l.lag_seconds), 0),
      },
      dead_letters: lanes.reduce((s, l) => s + l.dead, 0),
      failed_records: lanes.reduce((s, l) => s + l.failed, 0),
      queued: lanes.reduce((s, l) => s + l.queued, 0),
      lanes,
    });
  }
  const count = (s: ConnectorHealth['state']): number => items.filter((i) => i.state === s).length;
  return {
    summary: {
      total: items.length,
      running: count('running'),
      failed: count('failed'),
      stopped: count('stopped'),
      disabled: count('disabled'),
      dead_letters: items.reduce((s, i) => s + i.dead_letters, 0),
      max_lag_records: items.reduce((m, i) => Math.max(m, i.lag.records), 0),
      max_lag_seconds: items.reduce((m, i) => Math.max(m, i.lag.seconds), 0),
    },
    items,
  };
}

/** The figures the Prometheus gauges read at scrape time. */
export async function metricsSource(store: Store, runtime: ConnectorRuntime | undefined): Promise<MetricsSource> {
  const h = await connectorHealth(store, runtime);
  return {
    lags: h.items.flatMap((i) =>
      i.lanes
        .filter((l) => l.source === 'ledger')
        .map((l) => ({ connector: i.name, tenant: l.tenant, records: l.lag_records, seconds: l.lag_seconds })),
    ),
    states: h.items.map((i) => ({ connector: i.name, state: i.state })),
    dead: h.items.map((i) => ({ connector: i.name, count: i.dead_letters })),
  };
}
