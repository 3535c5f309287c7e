/**
 * Scenario `erasure` (issue 39): executing an erasure request on a real `svc serve --seed-demo`
 * (HTTPS, SQLite) whose tenant chain holds `SVC_BENCH_ERASURE_RECORDS` records (default 1,000,000,
 * a checkpoint every 1,000), the subject's personal strings in one record of every
 * `SVC_BENCH_ERASURE_EVERY` (default 100: 10,000 records). The chain is generated with the server
 * stopped, through the ledger's own parts and the server's key (bench/lib/ledger-chain.ts).
 *
 * Reports the time of the final `POST …/erasure/{id}/execute` (the one that erases: user tombstone,
 * ledger windows, WAL checkpoint) and `/healthz` p50/p99 probed every 10 ms from this process while
 * it runs. Baseline, same run: `/healthz` p50/p99 idle for 5 s just before. Afterwards the run fails
 * unless `GET /v1/audit/verify` is ok and the receipt counts the expected records.
 */
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { readHead } from '../../src/ledger/ledger-store.js';
import type { AuditDraft } from '../../src/ledger/record.js';
import { chainHeads } from '../../src/ledger/rotation.js';
import { loadOrCreateTls } from '../../src/serve/tls.js';
import { openStore } from '../../src/store/store.js';
import { createWorkerPool } from '../../src/workers/pool.js';
import { startDemoSvc, type DemoSvc } from '../lib/demo.js';
import { generateChain } from '../lib/ledger-chain.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';

const PASSWORD = 'a long enough password';

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Number((sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number).toFixed(2));
}

/** Probes `/healthz` every 10 ms (one in flight) until `stop` resolves; returns the latencies in ms, sorted. */
async function probe(url: string, ca: string, stop: Promise<unknown>): Promise<number[]> {
  const dispatcher = new Agent({ connect: { ca, servername: 'localhost' } });
  const out: number[] = [];
  let done = false;
  void stop.finally(() => (done = true));
  try {
    while (!done) {
      const t0 = performance.now();
      const res = await request(`${url}/healthz`, { dispatcher });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`/healthz answered ${res.statusCode}`);
      out.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await dispatcher.close();
  }
  return out.sort((a, b) => a - b);
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const total = Number(process.env['SVC_BENCH_ERASURE_RECORDS'] ?? 1_000_000);
  const every = Number(process.env['SVC_BENCH_ERASURE_EVERY'] ?? 100);
  const dataDir = join(ctx.tmpDir, 'svc-data');
  const email = 'alice.bench-subject@example.test';
  const name = 'Alice Bench-Subject';
  let demo: DemoSvc | undefined = await startDemoSvc(ctx, { readyTimeoutMs: 180_000 });
  const subject: Record<string, unknown> = { records: total, subject_records: Math.floor(total / every), store: 'sqlite' };
  try {
    const admin = demo;
    const tenant = ((await admin.call('GET', '/v1/audit?limit=1')).items[0] as { tenant: string }).tenant;
    const alice = (await admin.call('POST', '/v1/users', { email, password: PASSWORD, role: 'viewer' })).id as string;
    for (const em of ['ed1@bench.test', 'ed2@bench.test'])
      await admin.call('POST', '/v1/users', { email: em, password: PASSWORD, role: 'editor' });
    await demo.stop();
    demo = undefined;

    ctx.log(`generating a ${total.toLocaleString('en')}-record chain, the subject in every ${every}th …`);
    const store = await openStore({ backend: 'sqlite', dataDir });
    const keyring = await Keyring.open({ dataDir, env: {}, chainHeads: () => chainHeads(store) });
    const pool = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
    try {
      const tail = await store.withTenant(tenant, (tx) => readHead(tx, tenant));
      const g0 = performance.now();
      const draftAt = (seq: number): AuditDraft =>
        seq % 1000 === 0
          ? checkpointDraft()
          : seq % every === 7
            ? {
                actor: 'user:0197aaaa-bbbb-7ccc-8ddd-eeeeffff0000',
                actor_kind: 'user',
                action: 'ticket.update',
                target_kind: 'ticket',
                target_id: `t-${seq}`,
                meta: { requester: { email, name }, n: seq },
              }
            : {
                actor: 'user:0197aaaa-bbbb-7ccc-8ddd-eeeeffff0000',
                actor_kind: 'user',
                action: 'agent.update',
                target_kind: 'agent',
                target_id: `a-${seq}`,
                meta: { status: 'active', n: seq },
              };
      await generateChain(store, pool, keyring, tenant, total, draftAt, () => {}, tail);
      subject['generate_seconds'] = Number(((performance.now() - g0) / 1000).toFixed(1));
    } finally {
      await pool.close();
      await store.close();
    }

    demo = await startDemoSvc(ctx, { readyTimeoutMs: 180_000 });
    const d = demo;
    const tls = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
    const login = async (em: string) => (await d.call('POST', '/v1/auth/login', { email: em, password: PASSWORD })).token as string;
    const approvers = [await login('ed1@bench.test'), await login('ed2@bench.test')];
    const reg = await d.call('POST', '/v1/m/compliance/erasure', {
      case_ref: 'BENCH-1',
      subject_kind: 'user',
      subject_ref: alice,
      aliases: [email, name],
    });
    const pending = await d.call('POST', `/v1/m/compliance/erasure/${reg.id}/execute`, {});
    for (const t of approvers)
      await d.call('POST', `/v1/m/governance/approvals/${pending.approval_id}/decisions`, { decision: 'approve', reason: 'bench' }, t);

    ctx.log('/healthz idle, 5 s …');
    const idle = await probe(d.svc.url, tls.certPem, new Promise((r) => setTimeout(r, 5000)));
    ctx.log('executing the erasure while probing /healthz …');
    const t0 = performance.now();
    const exec = d.call('POST', `/v1/m/compliance/erasure/${reg.id}/execute`, { approval_id: pending.approval_id });
    const during = await probe(d.svc.url, tls.certPem, exec);
    await exec;
    const seconds = (performance.now() - t0) / 1000;
    const receipt = await d.call('GET', `/v1/m/compliance/erasure/${reg.id}/receipt`);
    const erased =
      (receipt.erased as Array<{ where: string; count: number }>).find((x) => x.where.startsWith('audit ledger (tenant chain)'))?.count ??
      0;
    if (Math.abs(erased - Math.floor(total / every)) > 1)
      throw new Error(
        `receipt counts ${erased} erased records, expected about ${Math.floor(total / every)}: ${JSON.stringify(receipt.erased)}`,
      );
    ctx.log('verifying the chain after erasure …');
    const v0 = performance.now();
    const verify = await d.call('GET', '/v1/audit/verify');
    if (verify.ok !== true) throw new Error(`verify after erasure: ${JSON.stringify(verify)}`);
    subject['verify_after_seconds'] = Number(((performance.now() - v0) / 1000).toFixed(1));
    subject['receipt_erased'] = receipt.erased;

    const raw: Measurement[] = [
      {
        target: 'erasure-execute',
        path: `${erased} of ${total} records`,
        requestsPerSec: Math.round(total / seconds),
        p50Ms: pct(during, 50),
        p99Ms: pct(during, 99),
        detail: {
          seconds: Number(seconds.toFixed(2)),
          erased_records: erased,
          healthz_probes: during.length,
          healthz_max_ms: pct(during, 100),
          note: 'req/s column: ledger records scanned per second; p50/p99: /healthz during the execution',
        },
      },
    ];
    const baselines: Measurement[] = [
      {
        target: 'healthz-idle',
        path: '5 s',
        requestsPerSec: 0,
        p50Ms: pct(idle, 50),
        p99Ms: pct(idle, 99),
        detail: { probes: idle.length, max_ms: pct(idle, 100) },
      },
    ];
    const ratios: Ratio[] = [
      {
        name: 'healthz-during-erasure/healthz-idle',
        path: '/healthz',
        requestsPerSec: 0,
        p50: Number((pct(during, 50) / Math.max(0.01, pct(idle, 50))).toFixed(2)),
        p99: Number((pct(during, 99) / Math.max(0.01, pct(idle, 99))).toFixed(2)),
      },
    ];
    return {
      raw,
      baselines,
      ratios,
      subject,
      notes: [
        `erasure of ${erased} records in a ${total}-record chain took ${seconds.toFixed(1)} s; /healthz p99 ${pct(during, 99)} ms ` +
          `during vs ${pct(idle, 99)} ms idle`,
      ],
    };
  } finally {
    await demo?.stop();
  }
}

export const scenario: Scenario = {
  name: 'erasure',
  description: 'erasure execution on a large SQLite ledger (subject in 1% of records): time, and /healthz p99 during vs idle',
  run,
};
