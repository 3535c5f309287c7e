/** The `svc bench <scenario>` report: its JSON document, its text form and its Markdown form. */
import type { EventingResult } from '../../../bench/eventing.js';
import type { ForwardResult } from '../../../bench/forward.js';
import type { IngestResult } from '../../../bench/ingest.js';
import type { LedgerAppendResult } from '../../../bench/ledger-append.js';
import type { LoadResult, Percentiles } from '../../../bench/loadgen.js';

/** Audited writes a `verify` or `export` run puts in the bench tenant's chain before the load. */
export const SEED = 500;

/** Scenarios of `svc bench`. */
export const BENCH_SCENARIOS = {
  http: 'GET /healthz: the bare request path (TLS, routing, access log)',
  whoami: 'GET /v1/auth/whoami with an API key: authentication on every request',
  'audited-write': 'POST /v1/agents: every 2xx is an agent row and a signed ledger record, durable',
  pep:
    'POST /v1/m/governance/pep/decisions: tool-call decisions (alternately scope-only Read and Cedar-evaluated Bash) under a 3-policy ' +
    'document, each with its signed ledger record',
  verify: `GET /v1/audit/verify: verification of the bench tenant's chain (seeded with ${SEED} audited writes first)`,
  export: `GET /v1/audit/export?format=ocsf: the bench tenant's chain streamed as OCSF (seeded with ${SEED} audited writes first)`,
  ingest: 'gRPC Ingest/Push from collector-equivalent clients: edge observations acked as durable (store + one ledger record per batch)',
  'ledger-append': 'the ledger append pipeline in this process: durable signed appends of 64 appenders on one chain',
  eventing:
    'signed webhook deliveries through the delivery engine in this process (SQLite, 100 subscriptions, loopback receivers in a ' +
    'child process): burst throughput against a bare undici client, paced latency, a drained backlog with RSS',
  forward:
    'the ledger forwarder in this process (read, encode, syslog kind over TLS, RFC 5425 octet counting) into a loopback TLS ' +
    'receiver, against a bare tls.connect client writing the same framed bytes',
} as const;
export type BenchScenario = keyof typeof BENCH_SCENARIOS;

/** One headline figure in the result-file format of `npm run bench` (what `svc bench plan` reads). */
export interface Measurement {
  target: string;
  path: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  detail: Record<string, unknown>;
}

/** The `svc bench <scenario> -o json` document. */
export type BenchReport = {
  scenario: BenchScenario;
  description: string;
  target: 'scratch' | 'server' | 'in-process';
  server: string;
  date: string;
  machine: { cpuModel: string; cores: number; loadavg1mBefore: number; loadavg1mAfter: number; node: string };
  /** HTTP scenarios */
  load?: LoadResult;
  ingest?: IngestResult;
  ledgerAppend?: LedgerAppendResult;
  eventing?: EventingResult;
  forward?: ForwardResult;
  ledger?: { acknowledged: number; headSeqGrowth: number; complete: boolean };
  /** the headline figures as `npm run bench` result files give them, so `svc bench plan` reads this file too */
  raw: Measurement[];
  subject: Record<string, unknown>;
  notes: string[];
};

const pct = (p: Percentiles): string => `p50 ${p.p50} ms  p90 ${p.p90} ms  p99 ${p.p99} ms  max ${p.max} ms`;

export function renderText(r: BenchReport): string {
  const lines = [`${r.scenario}: ${r.description}`, `target:     ${r.target} ${r.server}`];
  const l = r.load;
  if (l) {
    lines.push(
      `load:       ${l.targetRate} req/s asked, ${l.connections} connections, ${l.durationS}s`,
      `achieved:   ${l.achievedRate.toFixed(1)} req/s (2xx ${l.ok}, other ${l.non2xx}, errors ${l.errors}, timed out ${l.timedOut})`,
      `latency:    ${pct(l.latencyMs)}  (from the intended send time)`,
      `service:    ${pct(l.serviceMs)}  (from the actual send)`,
    );
  }
  const g = r.ingest;
  if (g) {
    lines.push(
      `load:       ${g.targetRate === null ? 'closed loop' : `${g.targetRate} observations/s asked`}, ${g.clients} clients, batches of ` +
        `${g.batch}, at most ${g.window} unacked each, ${g.durationS}s`,
      `achieved:   ${g.achievedRate.toFixed(1)} observations/s acked durable (${g.batchesAcked} batches, ${g.duplicates} duplicate, ` +
        `${g.rejected} rejected, ${g.errors} stream errors, ${g.timedOut} timed out)`,
      `ack:        ${pct(g.ackLatencyMs)}  (per batch, from ${g.targetRate === null ? 'the send' : 'the time it was due'})`,
      `service:    ${pct(g.serviceMs)}  (from the actual write)`,
    );
  }
  const a = r.ledgerAppend;
  if (a) {
    lines.push(
      `appends:    ${a.appendsPerSec.toFixed(1)}/s durable and signed (${a.appends} in ${a.durationS}s; ${a.appenders} appenders, ` +
        `${a.workerThreads} signing threads, ${a.algorithm}, ${a.store})`,
      `latency:    ${pct(a.latencyMs)}`,
      `chain:      ${a.chain.acknowledged} acknowledged, ${a.chain.records} records, head_seq ${a.chain.headSeq} → ` +
        `${a.chain.complete ? 'every append has its record' : 'RECORDS MISSING'}`,
      `bytes:      ${a.bytesPerRecord} per record added (${a.store === 'sqlite' ? 'SQLite file' : 'Postgres table'}, indexes included)` +
        (a.fileBytesPerRecord !== undefined ? `; whole file ÷ records ${a.fileBytesPerRecord}` : ''),
    );
  }
  const e = r.eventing;
  if (e) {
    lines.push(
      `deliveries: ${e.svcRate.toFixed(1)}/s signed and received (mean of 2 bursts of ${e.events} events × ${e.subscriptions} ` +
        `subscriptions: ${e.svc.map((x) => x.rate.toFixed(0)).join(', ')})`,
      `baseline:   ${e.bareRate.toFixed(1)}/s bare undici client (${e.bare.map((x) => x.rate.toFixed(0)).join(', ')}) → ratio ` +
        `${e.ratio.toFixed(3)}`,
      `cpu:        ${e.svcCpuPer1k.toFixed(0)} ms per 1,000 deliveries (bare ${e.bareCpuPer1k.toFixed(0)} ms) → ratio ` +
        `${e.cpuRatio.toFixed(3)}`,
      `paced:      ${e.pacedEventsPerSec * e.subscriptions} deliveries/s asked for ${e.pacedSeconds}s: event to receipt p50 ` +
        `${e.paced.p50} ms  p99 ${e.paced.p99} ms  max ${e.paced.max} ms (${e.paced.n} deliveries)`,
    );
    if (e.backlog)
      lines.push(
        `backlog:    ${e.backlog.delivered} of ${e.backlog.total} drained at ${e.backlog.rate.toFixed(1)}/s; RSS idle ` +
          `${e.backlog.idleMiB.toFixed(0)} MiB, peak +${e.backlog.peakAboveIdleMiB.toFixed(0)} MiB`,
      );
  }
  const f = r.forward;
  if (f) {
    lines.push(
      `records:    ${f.forwardPerSec}/s forwarded (median of ${f.rounds} runs of ${f.records} records, batches of ${f.batch}: ` +
        `${f.forwardRates.join(', ')})`,
      `baseline:   ${f.barePerSec}/s bare tls.connect, same framed bytes (${f.bareRates.join(', ')}) → ratio ${f.ratio.toFixed(3)}`,
      `receiver:   ${f.received} of ${f.sent} records counted (${f.bytesPerRun} framed bytes per run)`,
    );
  }
  if (r.ledger)
    lines.push(
      `ledger:     ${r.ledger.acknowledged} acknowledged writes, head_seq +${r.ledger.headSeqGrowth} → ` +
        `${r.ledger.complete ? 'every write has its record' : 'RECORDS MISSING'}`,
    );
  lines.push(
    `machine:    ${r.machine.cores} × ${r.machine.cpuModel}, load ${r.machine.loadavg1mBefore.toFixed(2)} → ` +
      `${r.machine.loadavg1mAfter.toFixed(2)}, node ${r.machine.node}`,
  );
  for (const n of r.notes) lines.push(`note: ${n}`);
  return lines.join('\n');
}

/** The Markdown report of `--report FILE.md`. */
export function renderMarkdown(r: BenchReport): string {
  const row = (name: string, p: Percentiles): string => `| ${name} | ${p.p50} | ${p.p90} | ${p.p99} | ${p.max} | ${p.mean} |`;
  const head = [
    `# svc bench ${r.scenario}`,
    '',
    `${r.description}.`,
    '',
    `- Target: ${r.target} (${r.server})`,
    `- Date: ${r.date}`,
    `- Machine: ${r.machine.cores} × ${r.machine.cpuModel}, Node ${r.machine.node}, load average ` +
      `${r.machine.loadavg1mBefore.toFixed(2)} before, ${r.machine.loadavg1mAfter.toFixed(2)} after`,
  ];
  const body: string[] = [];
  const ledgerRow = r.ledger
    ? [
        `| Ledger: acknowledged / head_seq growth | ${r.ledger.acknowledged} / ${r.ledger.headSeqGrowth} ` +
          `(${r.ledger.complete ? 'complete' : 'RECORDS MISSING'}) |`,
      ]
    : [];
  const latencyHead = ['| Latency (ms) | p50 | p90 | p99 | max | mean |', '|---|---|---|---|---|---|'];
  const l = r.load;
  if (l) {
    body.push(
      `- Load: open loop, ${l.targetRate} req/s asked over ${l.connections} connections for ${l.durationS} s (${l.due} requests due)`,
      '',
      '| Figure | Value |',
      '|---|---|',
      `| Achieved rate (2xx/s) | ${l.achievedRate.toFixed(1)} |`,
      `| 2xx | ${l.ok} |`,
      `| Other statuses | ${l.non2xx} |`,
      `| Transport errors | ${l.errors} |`,
      `| Not answered in time | ${l.timedOut} |`,
      `| Largest queue (due, not sent) | ${l.maxQueued} |`,
      ...ledgerRow,
      '',
      ...latencyHead,
      row('from the intended send time', l.latencyMs),
      row('service time (from the actual send)', l.serviceMs),
    );
  }
  const g = r.ingest;
  if (g) {
    body.push(
      `- Load: ${g.targetRate === null ? 'closed loop' : `open loop, ${g.targetRate} observations/s asked`}, ${g.clients} gRPC clients, ` +
        `batches of ${g.batch}, at most ${g.window} unacked per client, ${g.durationS} s`,
      '',
      '| Figure | Value |',
      '|---|---|',
      `| Observations acked durable per second | ${g.achievedRate.toFixed(1)} |`,
      `| Batches acked (ACCEPTED) | ${g.batchesAcked} |`,
      `| Duplicate / rejected batches | ${g.duplicates} / ${g.rejected} |`,
      `| Stream errors | ${g.errors} |`,
      `| Batches not acked in time | ${g.timedOut} |`,
      `| Distinct ledger records in the acks | ${g.ledgerRecords} |`,
      ...ledgerRow,
      '',
      ...latencyHead,
      row(`ack per batch (from ${g.targetRate === null ? 'the send' : 'the time it was due'})`, g.ackLatencyMs),
      row('service time (from the actual write)', g.serviceMs),
    );
  }
  const a = r.ledgerAppend;
  if (a) {
    body.push(
      `- Load: ${a.appenders} in-process appenders on one chain for ${a.durationS} s, ${a.workerThreads} signing threads, ${a.store}`,
      '',
      '| Figure | Value |',
      '|---|---|',
      `| Durable signed appends per second | ${a.appendsPerSec.toFixed(1)} |`,
      `| Appends in the measured window | ${a.appends} |`,
      `| Chain: acknowledged / records / head_seq | ${a.chain.acknowledged} / ${a.chain.records} / ${a.chain.headSeq} ` +
        `(${a.chain.complete ? 'complete' : 'RECORDS MISSING'}) |`,
      `| Bytes per record added (indexes included) | ${a.bytesPerRecord} |`,
      ...(a.fileBytesPerRecord !== undefined ? [`| Whole SQLite file ÷ records | ${a.fileBytesPerRecord} |`] : []),
      '',
      ...latencyHead,
      row('one append, to durable', a.latencyMs),
    );
  }
  const e = r.eventing;
  if (e) {
    body.push(
      `- Load: bursts of ${e.events} events × ${e.subscriptions} subscriptions (A B B A against a bare undici client), then ` +
        `${e.pacedEventsPerSec} events/s paced for ${e.pacedSeconds} s` +
        (e.backlog ? `, then a backlog of ${e.backlog.total} deliveries drained` : ''),
      '',
      '| Figure | svc | bare undici | svc / bare |',
      '|---|---|---|---|',
      `| Deliveries per second (burst) | ${e.svcRate.toFixed(1)} | ${e.bareRate.toFixed(1)} | ${e.ratio.toFixed(3)} |`,
      `| CPU ms per 1,000 deliveries | ${e.svcCpuPer1k.toFixed(1)} | ${e.bareCpuPer1k.toFixed(1)} | ${e.cpuRatio.toFixed(3)} |`,
      '',
      '| Paced (ms, event to receipt) | p50 | p99 | max | deliveries |',
      '|---|---|---|---|---|',
      `| ${e.pacedEventsPerSec * e.subscriptions} deliveries/s asked | ${e.paced.p50} | ${e.paced.p99} | ${e.paced.max} | ${e.paced.n} |`,
      ...(e.backlog
        ? [
            '',
            '| Backlog | Value |',
            '|---|---|',
            `| Delivered / queued | ${e.backlog.delivered} / ${e.backlog.total} |`,
            `| Drain rate (deliveries/s) | ${e.backlog.rate.toFixed(1)} |`,
            `| RSS idle / peak above idle (MiB) | ${e.backlog.idleMiB.toFixed(1)} / ${e.backlog.peakAboveIdleMiB.toFixed(1)} |`,
          ]
        : []),
    );
  }
  const f = r.forward;
  if (f) {
    body.push(
      `- Load: ${f.rounds} runs each of ${f.records} records in batches of ${f.batch}, forwarder and bare client alternating`,
      '',
      '| Figure | forwarder | bare tls.connect | forwarder / bare |',
      '|---|---|---|---|',
      `| Records per second (median) | ${f.forwardPerSec} | ${f.barePerSec} | ${f.ratio.toFixed(3)} |`,
      `| Receiver: records counted / sent | ${f.received} / ${f.sent} | | |`,
    );
  }
  return [...head, ...body, '', ...(r.notes.length > 0 ? ['Notes:', '', ...r.notes.map((n) => `- ${n}`), ''] : [])].join('\n');
}
