/**
 * `GET /v1/m/observability/ingestion-health`: per interop standard the engine pins, what flows in
 * and out (counts and last-seen, from the tenant's ledger and ingest tables) and whether the pinned
 * version holds, by a check run now (format-checks.ts). A standard this build does not implement
 * says so (`not_implemented`) instead of reporting empty flows as health.
 */
import { sql } from 'kysely';
import type { Services } from '../../serve/services.js';
import { OCSF_VERSION } from '../../encoders/ocsf.js';
import { checkAsim, checkOcsf, checkPrometheus, checkSiemFormats, checkTraceContext, type CheckResult } from './format-checks.js';
import { DEFAULT_WINDOW, exportsByFormat, traceIdOf, visitRecent, type Window } from './ledger-window.js';

export interface Flow {
  what: string;
  count: number;
  last_seen: string | null;
}

export interface StandardHealth {
  standard: string;
  pinned_version: string;
  status: 'ok' | 'failed' | 'not_implemented';
  check: CheckResult | null;
  inbound: Flow[];
  outbound: Flow[];
  note?: string;
}

const SIEM = ['cef', 'leef', 'syslog', 'otlp', 'otlp_envelope', 'otlp_log_record'];

function statusOf(c: CheckResult): StandardHealth['status'] {
  return c.verified ? 'ok' : 'failed';
}

/** The whole answer for one tenant. */
export async function ingestionHealth(
  services: Pick<Services, 'store' | 'metrics' | 'build'>,
  tenant: string,
  window = DEFAULT_WINDOW,
): Promise<{ ledger_window: Window; standards: StandardHealth[] }> {
  const device = { vendor: 'svc', product: 'control-plane', version: services.build.version };
  const { range, formats } = await exportsByFormat(services.store, tenant, window);
  const out = (f: string): Flow => ({
    what: `ledger export as ${f}`,
    count: formats.get(f)?.count ?? 0,
    last_seen: formats.get(f)?.last_seen ?? null,
  });
  let traced = 0;
  let tracedLast: string | null = null;
  await visitRecent(services.store, tenant, window, (r) => {
    if (traceIdOf(r) === undefined) return;
    traced++;
    tracedLast = r.occurred_at;
  });
  const ingest = await services.store.withTenant(tenant, (tx) =>
    tx
      .selectFrom('ingest_batches')
      .select([sql<number | string>`count(*)`.as('n'), sql<string | null>`max(created_at)`.as('last')])
      .where('tenant_id', '=', tenant)
      .executeTakeFirst(),
  );
  const scrapes = await scrapeCount(services);
  const prom = checkPrometheus(services.metrics.contentType, await services.metrics.render());
  const siem = checkSiemFormats(device);
  const ocsf = checkOcsf(device);
  const asim = checkAsim(device);
  const trace = checkTraceContext();
  return {
    ledger_window: range,
    standards: [
      {
        standard: 'w3c-trace-context',
        pinned_version: 'Level 1, traceparent 00',
        status: statusOf(trace),
        check: trace,
        inbound: [{ what: 'ledger records correlated by a request traceparent', count: traced, last_seen: tracedLast }],
        outbound: [],
      },
      {
        standard: 'opentelemetry-genai-semconv',
        pinned_version: 'none',
        status: 'not_implemented',
        check: null,
        inbound: [],
        outbound: [],
        note: 'this build neither reads nor writes gen_ai.* telemetry attributes',
      },
      { standard: 'ocsf', pinned_version: OCSF_VERSION, status: statusOf(ocsf), check: ocsf, inbound: [], outbound: [out('ocsf')] },
      {
        standard: 'asim',
        pinned_version: 'AuditEvent 0.1',
        status: statusOf(asim),
        check: asim,
        inbound: [],
        outbound: [],
        note: 'encoded for output connectors; no connector of this build sends it yet',
      },
      {
        standard: 'siem-formats',
        pinned_version: 'CEF:0, LEEF:2.0, RFC 5424, OTLP/JSON logs',
        status: statusOf(siem),
        check: siem,
        inbound: [],
        outbound: [...SIEM.map(out), out('sarif')],
      },
      {
        standard: 'ledger-push',
        pinned_version: 'none',
        status: 'not_implemented',
        check: null,
        inbound: [],
        outbound: [],
        note: 'this build has no ledger forwarder; the ledger leaves only by pull (GET /v1/audit/export)',
      },
      {
        standard: 'prometheus-text',
        pinned_version: '0.0.4',
        status: statusOf(prom),
        check: prom,
        inbound: [],
        outbound: [{ what: 'GET /metrics answered (this process, since start)', count: scrapes, last_seen: null }],
      },
      {
        standard: 'svc-collector-ingest',
        pinned_version: 'olivares.api.v1 Ingest',
        status: 'ok',
        check: null,
        inbound: [{ what: 'collector batches committed', count: Number(ingest?.n ?? 0), last_seen: ingest?.last ?? null }],
        outbound: [],
      },
    ],
  };
}

async function scrapeCount(services: Pick<Services, 'metrics'>): Promise<number> {
  const metric = services.metrics.registry.getSingleMetric('svc_http_requests_total');
  if (!metric) return 0;
  const data = await metric.get();
  return data.values.filter((v) => v.labels['route'] === '/metrics').reduce((n, v) => n + v.value, 0);
}
