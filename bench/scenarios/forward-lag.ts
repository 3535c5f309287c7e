/**
 * Scenario `forward-lag` (issue 32 must-show, the sub-mode of `forward` with ingest running): a real
 * `svc serve` (TLS, SQLite) forwards its tenant's audit ledger through a `syslog` connector into a
 * real Debian `rsyslogd` over TLS (octet counting, certificate verified) while 16 gRPC ingest clients
 * push edge observations paced at `SVC_BENCH_INGEST_RATE` (default 25,000) observations/s, as the
 * `ingest` scenario does. The forwarder's lag — records and seconds, as `GET /v1/connectors/health`
 * reports them from the runtime's cursors (the same figures as `svc_connector_lag_*`) — is sampled
 * every `SVC_BENCH_LAG_SAMPLE_MS` (default 250) over the measured window; p50, p99 and the maximum
 * are reported with the ingest rate that was acked meanwhile. One ledger record seals each ingest
 * batch (500 observations), so 25,000 observations/s is about 50 ledger records/s to forward, plus
 * whatever else the server records.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { rsyslogMissing, startRsyslog } from '../../test/helpers/rsyslog.js';
import { BenchRefusal, startSvc } from '../lib/server.js';
import type { BenchContext, Scenario, ScenarioResult } from '../lib/types.js';
import { CLIENTS, quantile, runClient, type ClientRun } from './ingest.js';

const CONNECTOR = 'bench-forward';

function knob(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
}

interface Lag {
  records: number;
  seconds: number;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const missing = rsyslogMissing();
  if (missing) throw new BenchRefusal(missing);
  const RATE = knob('SVC_BENCH_INGEST_RATE', 25_000);
  const BATCH = knob('SVC_BENCH_INGEST_BATCH', 500);
  const WINDOW = knob('SVC_BENCH_INGEST_WINDOW', 4);
  const SAMPLE_MS = knob('SVC_BENCH_LAG_SAMPLE_MS', 250);
  const rs = await startRsyslog();
  const dataDir = join(ctx.tmpDir, 'svc');
  const svc = await startSvc({
    repoRoot: ctx.repoRoot,
    dataDir,
    insecure: false,
    logFile: join(ctx.tmpDir, 'svc.log'),
    env: { SERVICE_RATE_LIMIT_RPS: '0' },
  });
  const ca = readFileSync(join(dataDir, 'tls', 'cert.pem'));
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const call = async (method: string, path: string, body?: unknown, token?: string, tenant?: string) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token) headers['authorization'] = `Bearer ${token}`;
      if (tenant) headers['x-service-tenant'] = tenant;
      const res = await request(`${svc.url}${path}`, {
        method: method as 'GET',
        headers,
        dispatcher,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.body.json()) as Record<string, any>;
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
      return json;
    };
    const setupToken = /svcst_[A-Z2-7]+/.exec(readFileSync(svc.logFile, 'utf8'))?.[0];
    if (!setupToken) throw new Error('no setup token in the svc output');
    const admin = { email: 'bench@example.test', password: 'bench password 12345' };
    const tenant = (await call('POST', '/v1/setup', { token: setupToken, ...admin, organization: 'Bench' }))['organization'].id as string;
    const session = (await call('POST', '/v1/auth/login', admin))['token'] as string;
    const token = (await call('POST', '/v1/tokens', { name: 'bench-ingest', role: 'admin', tenant }, session, tenant))['token'] as string;
    await call(
      'PUT',
      '/v1/console/connectors',
      {
        name: CONNECTOR,
        kind: 'syslog',
        tenant,
        config: { host: '127.0.0.1', port: rs.tlsPort, ca_file: rs.caFile, server_name: 'localhost' },
      },
      session,
    );
    const health = async (): Promise<{ lag: Lag; delivered: number; head: number; state: string }> => {
      const item = (await call('GET', `/v1/connectors/health?name=${CONNECTOR}`, undefined, session))['items'][0];
      const lane = (item.lanes as Array<{ source: string; delivered_seq: number; head_seq: number }>).find((l) => l.source === 'ledger');
      return { lag: item.lag as Lag, delivered: lane?.delivered_seq ?? 0, head: lane?.head_seq ?? 0, state: item.state as string };
    };

    const addr = `127.0.0.1:${svc.grpcPort}`;
    const start = performance.now();
    const measureFrom = start + ctx.options.warmup * 1000;
    const until = measureFrom + ctx.options.duration * 1000;
    ctx.log(
      `${CLIENTS} gRPC clients paced at ${RATE} observations/s (batches of ${BATCH}) while the connector forwards into rsyslog over ` +
        `TLS; lag sampled every ${SAMPLE_MS} ms: warm-up ${ctx.options.warmup} s, measuring ${ctx.options.duration} s …`,
    );
    const samples: Array<Lag & { at: number }> = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t = performance.now();
        if (t >= measureFrom && t <= until) {
          const h = await health();
          samples.push({ ...h.lag, at: t });
        }
        await new Promise((r) => setTimeout(r, Math.max(0, SAMPLE_MS - (performance.now() - t))));
      }
    })();
    const runs: ClientRun[] = Array.from({ length: CLIENTS }, () => ({ accepted: 0, latencies: [] }));
    const before = await health();
    await Promise.all(
      runs.map((r, n) => runClient(addr, ca, token, n, { batch: BATCH, window: WINDOW, rate: RATE }, until, measureFrom, r)),
    );
    sampling = false;
    await sampler;
    const atEnd = await health();
    // Caught up after the load: every record up to the head delivered (and rsyslog holds them).
    const deadline = Date.now() + 120_000;
    let final = atEnd;
    while (final.delivered < final.head && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      final = await health();
    }
    await rs.waitFor(final.delivered, 120_000);
    const accepted = runs.reduce((n, r) => n + r.accepted, 0);
    const ingestRate = accepted / ctx.options.duration;
    const lat = runs.flatMap((r) => r.latencies);
    const recs = samples.map((s) => s.records);
    const secs = samples.map((s) => s.seconds);
    const forwarded = atEnd.delivered - before.delivered;
    return {
      raw: [
        {
          target: 'forward-lag-records',
          path: `lag in records, ${samples.length} samples`,
          requestsPerSec: 0,
          p50Ms: quantile(recs, 0.5),
          p99Ms: quantile(recs, 0.99),
          detail: { max: Math.max(0, ...recs), unit: 'records (p50Ms/p99Ms hold records, not ms)' },
        },
        {
          target: 'forward-lag-seconds',
          path: `lag in seconds, ${samples.length} samples`,
          requestsPerSec: 0,
          p50Ms: Number((quantile(secs, 0.5) * 1000).toFixed(1)),
          p99Ms: Number((quantile(secs, 0.99) * 1000).toFixed(1)),
          detail: { max_s: Math.max(0, ...secs) },
        },
        {
          target: 'svc-grpc-ingest',
          path: `Push (${CLIENTS} clients, batch ${BATCH}, paced ${RATE}/s) during forwarding`,
          requestsPerSec: Math.round(ingestRate),
          p50Ms: Number(quantile(lat, 0.5).toFixed(2)),
          p99Ms: Number(quantile(lat, 0.99).toFixed(2)),
          detail: { observations: accepted, batches: lat.length },
        },
      ],
      baselines: [],
      ratios: [],
      subject: {
        version: svc.version,
        engine: svc.engine,
        store: 'sqlite',
        connector: 'syslog over TLS (octet counting) into rsyslogd',
        offered_rate: RATE,
        batch: BATCH,
        sample_ms: SAMPLE_MS,
        ledger_records_forwarded_in_window: forwarded,
        head_at_end: final.head,
        delivered_at_end: final.delivered,
        state_at_end: final.state,
      },
      notes: [
        `forwarder lag while ingest ran: p50 ${quantile(recs, 0.5)} / p99 ${quantile(recs, 0.99)} / max ${Math.max(0, ...recs)} ` +
          `records; p50 ${quantile(secs, 0.5).toFixed(3)} / p99 ${quantile(secs, 0.99).toFixed(3)} / max ` +
          `${Math.max(0, ...secs).toFixed(3)} s (${samples.length} samples of GET /v1/connectors/health)`,
        `ingest acked ${Math.round(ingestRate)} observations/s of ${RATE} offered (${Math.round((100 * ingestRate) / RATE)}%); ack p99 ` +
          `${quantile(lat, 0.99).toFixed(1)} ms`,
        `${forwarded} ledger records forwarded during the measured window; after the load the lane caught up to seq ${final.delivered} ` +
          `of ${final.head} and rsyslog holds them`,
        'Lag seconds is the age of the oldest ledger record not yet delivered (0 when caught up), so it includes the engine poll ' +
          '(1 s) for records committed without a bus event; the ledger rate here is one record per ingest batch.',
      ],
    };
  } finally {
    await dispatcher.close();
    await svc.stop();
    await rs.close();
  }
}

export const scenario: Scenario = {
  name: 'forward-lag',
  description:
    'ledger forwarder lag (records, seconds; p50/p99) into rsyslog over TLS while gRPC ingest is paced ' +
    '(SVC_BENCH_INGEST_RATE, default 25,000/s)',
  run,
};
