/**
 * Scenario `eventing` (issue 38): signed webhook deliveries through the real delivery engine on
 * SQLite (synchronous=FULL), in-process bus, 100 subscriptions to loopback receivers that run in a
 * child process (src/bench/eventing-receiver.ts), so the CPU this process spends is the sender's.
 *
 * 1. Throughput, ABBA: A = svc drains a burst of `SVC_BENCH_EVENTING_EVENTS` events (default 200,
 *    × 100 subscriptions) written to the durable log in transactions of 50 while the engine runs;
 *    B = the baseline, a bare undici client posting the same signed bodies (signed per request, as
 *    the engine does) to the same receivers, one in flight per subscription. Order A B B A; each
 *    figure is the mean of its two runs. Also CPU ms of this process per 1,000 deliveries.
 * 2. Latency below saturation: events published one per transaction at a steady rate of half the
 *    measured svc throughput for `SVC_BENCH_EVENTING_PACED_S` seconds (default 5): event-to-receipt
 *    p50/p99 (receipt time minus the envelope's `time`, stamped before the commit).
 * 3. Backlog: the engine stopped, `SVC_BENCH_EVENTING_BACKLOG` deliveries (default 100,000; the
 *    issue's figure is 1,000,000) queued in the store, then a new engine drains them: deliveries/s
 *    and peak RSS above the idle RSS measured just before (sampled every 250 ms).
 *
 * The measuring code is shipped in src/bench/eventing.ts (`runEventing`), which `svc bench eventing`
 * runs too; this file maps its result to the harness's result format.
 */
import { HEAP_GROWING_PERCENT } from '../../src/serve/heap-growth.js';
import { runEventing, type BacklogResult, type BurstRun } from '../../src/bench/eventing.js';
import { track } from '../lib/child.js';
import type { BenchContext, Measurement, Scenario, ScenarioResult } from '../lib/types.js';

const SUBSCRIPTIONS = 100;
const num = (name: string, def: number): number => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
};

export const scenario: Scenario = {
  name: 'eventing',
  description:
    'signed webhook deliveries/s (ABBA vs a bare undici client), paced p50/p99, and a drained backlog with RSS: 100 subscriptions, ' +
    'loopback receivers, SQLite',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const events = num('SVC_BENCH_EVENTING_EVENTS', 200);
    const pacedS = num('SVC_BENCH_EVENTING_PACED_S', 5);
    const backlogN = num('SVC_BENCH_EVENTING_BACKLOG', 100_000);
    const e = await runEventing({
      dataDir: ctx.tmpDir,
      events,
      pacedSeconds: pacedS,
      backlog: backlogN,
      warmupEvents: 10,
      log: ctx.log,
      onChild: (c) => void track(c),
    });
    const [a1, a2] = e.svc as [BurstRun, BurstRun];
    const [b1, b2] = e.bare as [BurstRun, BurstRun];
    const { svcRate, bareRate } = e;
    const svcCpu = e.svcCpuPer1k;
    const bareCpu = e.bareCpuPer1k;
    const rate = e.pacedEventsPerSec;
    const p = e.paced;
    const bl = e.backlog as BacklogResult;
    const cacheMib = e.sqliteCacheMib;
    const raw: Measurement[] = [
      {
        target: 'svc-delivery-engine',
        path: 'burst drain (ABBA)',
        requestsPerSec: Math.round(svcRate),
        p50Ms: 0,
        p99Ms: 0,
        detail: { runs: [a1, a2], cpuMsPer1000: Number(svcCpu.toFixed(1)) },
      },
      {
        target: 'svc-delivery-engine',
        path: `paced ${rate * SUBSCRIPTIONS}/s`,
        requestsPerSec: Math.round(p.deliveriesPerSec),
        p50Ms: p.p50,
        p99Ms: p.p99,
        detail: { ...p, eventsPerSec: rate, seconds: pacedS },
      },
      { target: 'svc-delivery-engine', path: `backlog ${bl.total}`, requestsPerSec: Math.round(bl.rate), p50Ms: 0, p99Ms: 0, detail: bl },
    ];
    return {
      raw,
      baselines: [
        {
          target: 'bare-undici-client',
          path: 'burst (ABBA)',
          requestsPerSec: Math.round(bareRate),
          p50Ms: 0,
          p99Ms: 0,
          detail: { runs: [b1, b2], cpuMsPer1000: Number(bareCpu.toFixed(1)) },
        },
      ],
      ratios: [
        { name: 'svc/bare-client', path: 'deliveries/s', requestsPerSec: Number((svcRate / bareRate).toFixed(3)), p50: 0, p99: 0 },
        {
          name: 'svc/bare-client',
          path: 'CPU ms per 1,000 (>1: svc costlier)',
          requestsPerSec: Number((svcCpu / bareCpu).toFixed(3)),
          p50: 0,
          p99: 0,
        },
      ],
      subject: {
        store: 'sqlite',
        synchronous: 'full',
        subscriptions: SUBSCRIPTIONS,
        events,
        sink_format: 'json',
        backlog: backlogN,
        backlogPeakRssAboveIdleMiB: Number(bl.peakAboveIdleMiB.toFixed(1)),
        backlogIdleRssMiB: Number(bl.idleMiB.toFixed(1)),
        heapGrowingPercent: e.heapGrowth ? HEAP_GROWING_PERCENT : 'node command line',
        sqliteCacheMib: cacheMib ?? 'default',
      },
      notes: [
        `throughput: svc ${a1.rate.toFixed(0)} and ${a2.rate.toFixed(0)}/s, bare ${b1.rate.toFixed(0)} and ${b2.rate.toFixed(0)}/s ` +
          `(A B B A); CPU of this process per 1,000 deliveries: svc ${svcCpu.toFixed(0)} ms, bare ${bareCpu.toFixed(0)} ms`,
        `paced at ${rate} events/s × ${SUBSCRIPTIONS}: event-to-receipt p50 ${p.p50} ms, p99 ${p.p99} ms, max ${p.max} ms over ` +
          `${p.n} deliveries`,
        `backlog: ${bl.total} deliveries queued in ${bl.queueSeconds.toFixed(0)} s, drained in ${bl.seconds.toFixed(0)} s ` +
          `(${bl.rate.toFixed(0)}/s); RSS idle ${bl.idleMiB.toFixed(0)} MiB, peak +${bl.peakAboveIdleMiB.toFixed(0)} MiB ` +
          `(V8 heap +${bl.heapPeakAboveIdleMiB.toFixed(0)} MiB)`,
        'Receivers run in a child process; the machine is 2 cores shared with other work: compare ratios of one run, and see the ' +
          'load average.',
      ],
    };
  },
};
