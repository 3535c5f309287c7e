/**
 * `svc bench ingest` (issue 36): collector-equivalent gRPC clients push edge observations over
 * `Ingest/Push` (the collector's protocol). Every ACCEPTED ack is durable (store + ledger), so the
 * figure is observations/s acked as durable, with the ack latency per batch.
 *
 * Open loop with `rate` > 0: batch i is due at t0 + i × batch / rate and goes to client i mod
 * clients; a client keeps at most `window` batches unacked, a due batch beyond that waits in its
 * backlog and its latency still counts from when it was due (no coordinated omission). Closed loop
 * with `rate` 0: each client keeps `window` batches in flight, latency from the send. Sending stops
 * at the end of the duration; acks get a grace period, and batches still unacked after it are
 * counted as timed out with their age at the cut-off as a lower bound of their latency.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Metadata, credentials, type ChannelCredentials, type ClientDuplexStream } from '@grpc/grpc-js';
import { serviceClient } from '../grpc/proto.js';
import { percentiles, type Percentiles } from './loadgen.js';

export interface IngestOptions {
  /** host:port of the gRPC listener */
  addr: string;
  /** TLS trust: the server's CA (PEM) or a root list; undefined with `insecure` */
  ca?: string | Buffer;
  /** plaintext gRPC (a loopback `--insecure` server) */
  insecure?: boolean;
  /** TLS server name to check the certificate against (default: the host of `addr`) */
  servername?: string;
  token: string;
  /** sent as x-service-tenant when the token alone does not say */
  tenant?: string;
  clients: number;
  batch: number;
  window: number;
  /** observations/s, open loop; 0 = closed loop (`window` batches always in flight per client) */
  rate: number;
  /** measured time, after the warm-up */
  durationMs: number;
  /** unrecorded load before the measured time (JIT, TLS, page cache) */
  warmupMs?: number;
  /** time allowed after the duration for unacked batches (default 10 s) */
  graceMs?: number;
  /** a run tag folded into the resource names, so two runs in one tenant do not collide */
  runId: string;
  onProgress?(p: { elapsedS: number; batchesDue: number; batchesAcked: number; observations: number; backlog: number }): void;
}

export interface IngestResult {
  clients: number;
  batch: number;
  window: number;
  /** observations/s asked (null: closed loop) */
  targetRate: number | null;
  durationS: number;
  batchesDue: number;
  batchesSent: number;
  /** ACCEPTED acks */
  batchesAcked: number;
  duplicates: number;
  rejected: number;
  /** observations in ACCEPTED acks */
  observations: number;
  /** observations acked as durable per second over the measured window (the end of the warm-up to the end of the duration) */
  achievedRate: number;
  /** all ACCEPTED observations (warm-up and drain included) over the first due time to the last ack */
  drainedRate: number;
  /** distinct ledger_seq values among the ACCEPTED acks (one `ingest.batch` record per batch) */
  ledgerRecords: number;
  /** ack latency per batch due after the warm-up, from when it was due (open loop) or sent (closed loop), ms */
  ackLatencyMs: Percentiles;
  /** ack latency from the actual write on the stream, ms */
  serviceMs: Percentiles;
  /** batches not acked at the end of the grace period */
  timedOut: number;
  /** streams that failed (gRPC status) */
  errors: number;
  firstError?: string;
}

export const INGEST_LIMITS = { maxClients: 256, maxBatch: 5000, maxWindow: 64 } as const;

type Ack = { batch_id: string; accepted: number; status: string; ledger_seq?: number | string; error?: string };

interface Client {
  stream: ClientDuplexStream<unknown, Ack>;
  close(): void;
  /** batch id → [due, sent] */
  unacked: Map<string, [number, number]>;
  /** due times of batches waiting for the window */
  backlog: number[];
  seq: number;
  done: boolean;
}

export async function runIngest(o: IngestOptions): Promise<IngestResult> {
  const graceMs = o.graceMs ?? 10_000;
  const creds: ChannelCredentials = o.insecure ? credentials.createInsecure() : credentials.createSsl(o.ca ? Buffer.from(o.ca) : null);
  const channelOpts: Record<string, string | number> = { 'grpc.use_local_subchannel_pool': 1 };
  if (o.servername !== undefined) channelOpts['grpc.ssl_target_name_override'] = o.servername;
  const Ctor = serviceClient('Ingest');
  const latency: number[] = [];
  const service: number[] = [];
  const seqs = new Set<number>();
  let batchesDue = 0;
  let batchesSent = 0;
  let batchesAcked = 0;
  let duplicates = 0;
  let rejected = 0;
  let observations = 0;
  let inWindow = 0;
  let errors = 0;
  let firstError: string | undefined;
  let lastAck = 0;
  let stopped = false;
  let cutOff = false;
  const openLoop = o.rate > 0;
  const intervalMs = openLoop ? (o.batch * 1000) / o.rate : 0;
  const warmupMs = o.warmupMs ?? 0;
  let t0 = 0;
  let measureFrom = 0;
  let endAt = 0;
  const total = openLoop ? Math.max(1, Math.floor((o.rate * (warmupMs + o.durationMs)) / (1000 * o.batch))) : Infinity;

  let wake: (() => void) | undefined;
  const settled = new Promise<void>((resolve) => (wake = resolve));
  const maybeSettled = (): void => {
    if (stopped && clients.every((c) => c.done || (c.unacked.size === 0 && c.backlog.length === 0))) wake?.();
  };

  const send = (c: Client, n: number, due: number): void => {
    const id = randomUUID();
    const edges = Array.from({ length: o.batch }, (_, i) => ({
      origin_kind: 'identity',
      origin_ref: `bench-${o.runId}-sa-${n}-${i % 20}`,
      resource_ref: `bench-${o.runId}-res-${(c.seq * 7 + i) % 5000}`,
      mode: i % 5 ? 'r' : 'rw',
      confidence: 'high',
      signal_source: `svc-bench-${n}`,
    }));
    c.seq++;
    batchesSent++;
    c.unacked.set(id, [due, performance.now()]);
    c.stream.write({ batch_id: id, collector: `svc-bench-${o.runId}-${n}`, edges });
  };

  // Connections (TCP, TLS, HTTP/2) are made before the clock starts, as a collector's are.
  const ready = await Promise.allSettled(
    Array.from({ length: o.clients }, async () => {
      const client = new Ctor(o.addr, creds, channelOpts);
      await new Promise<void>((resolve, reject) =>
        client.waitForReady(Date.now() + 30_000, (err) => (err ? (client.close(), reject(err)) : resolve())),
      );
      return client;
    }),
  );
  const failed = ready.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    ready.forEach((r) => r.status === 'fulfilled' && r.value.close());
    throw new Error(`gRPC ${o.addr}: ${(failed.reason as Error).message}`);
  }
  t0 = performance.now() + 5;
  measureFrom = t0 + warmupMs;
  endAt = measureFrom + o.durationMs;
  const clients: Client[] = ready.map((r, n) => {
    const client = (r as PromiseFulfilledResult<InstanceType<typeof Ctor>>).value;
    const md = new Metadata();
    md.set('authorization', `Bearer ${o.token}`);
    if (o.tenant !== undefined) md.set('x-service-tenant', o.tenant);
    const stream = (client as unknown as { Push(md: Metadata): ClientDuplexStream<unknown, Ack> }).Push(md);
    const c: Client = { stream, close: () => client.close(), unacked: new Map(), backlog: [], seq: 0, done: false };
    stream.on('data', (ack: Ack) => {
      const times = c.unacked.get(ack.batch_id);
      c.unacked.delete(ack.batch_id);
      if (cutOff || times === undefined) return;
      const now = performance.now();
      lastAck = now;
      if (times[0] >= measureFrom) {
        latency.push(now - times[0]);
        service.push(now - times[1]);
      }
      if (ack.status === 'ACCEPTED') {
        batchesAcked++;
        observations += Number(ack.accepted);
        if (now >= measureFrom && now <= endAt) inWindow += Number(ack.accepted);
        const s = Number(ack.ledger_seq ?? 0);
        if (s > 0) seqs.add(s);
      } else if (ack.status === 'DUPLICATE') duplicates++;
      else {
        rejected++;
        firstError ??= `batch rejected: ${ack.error ?? ack.status}`;
      }
      if (!openLoop && !stopped) send(c, n, performance.now());
      else if (c.backlog.length > 0 && !cutOff) send(c, n, c.backlog.shift() as number);
      maybeSettled();
    });
    const fail = (err: Error): void => {
      if (!c.done) {
        c.done = true;
        errors++;
        firstError ??= err.message;
      }
      maybeSettled();
    };
    stream.on('error', fail);
    stream.on('end', () => {
      c.done = true;
      maybeSettled();
    });
    return c;
  });

  let lastProgress = t0;
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    const now = performance.now();
    if (openLoop) {
      const dueNow = Math.min(total, Math.floor((now - t0) / intervalMs) + 1);
      for (; batchesDue < dueNow; batchesDue++) {
        const n = batchesDue % o.clients;
        const c = clients[n] as Client;
        if (c.done) continue;
        const due = t0 + batchesDue * intervalMs;
        if (c.unacked.size < o.window && c.backlog.length === 0) send(c, n, due);
        else c.backlog.push(due);
      }
    }
    if (o.onProgress && now - lastProgress >= 1000) {
      lastProgress = now;
      const backlog = clients.reduce((a, c) => a + c.backlog.length, 0);
      o.onProgress({ elapsedS: (now - t0) / 1000, batchesDue, batchesAcked, observations, backlog });
    }
    if (now >= endAt || (openLoop && batchesDue >= total)) {
      stopped = true;
      maybeSettled();
      return;
    }
    const wait = openLoop ? Math.min(10, Math.max(0, t0 + batchesDue * intervalMs - performance.now())) : Math.min(100, endAt - now);
    timer = setTimeout(tick, wait);
  };
  setTimeout(() => {
    if (!openLoop)
      clients.forEach((c, n) => {
        for (let i = 0; i < o.window; i++) send(c, n, performance.now());
      });
    tick();
  }, 5);

  let graceTimer: NodeJS.Timeout | undefined;
  await Promise.race([settled, new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, warmupMs + o.durationMs + graceMs + 10)))]);
  clearTimeout(timer);
  clearTimeout(graceTimer);
  cutOff = true;
  const cut = performance.now();
  let timedOut = 0;
  for (const c of clients) {
    for (const [due] of c.unacked.values()) latency.push(cut - due);
    for (const due of c.backlog) latency.push(cut - due);
    timedOut += c.unacked.size + c.backlog.length;
    if (!c.done) c.stream.end();
  }
  // The server ends each stream once its last batch is acked; give the ends a moment, then close.
  await new Promise((r) => setTimeout(r, 50));
  clients.forEach((c) => c.close());
  if (openLoop) timedOut += Math.max(0, total - batchesDue);

  return {
    clients: o.clients,
    batch: o.batch,
    window: o.window,
    targetRate: openLoop ? o.rate : null,
    durationS: o.durationMs / 1000,
    batchesDue: openLoop ? total : batchesSent,
    batchesSent,
    batchesAcked,
    duplicates,
    rejected,
    observations,
    achievedRate: inWindow / (o.durationMs / 1000),
    drainedRate: observations / Math.max(1e-3, ((lastAck || cut) - t0) / 1000),
    ledgerRecords: seqs.size,
    ackLatencyMs: percentiles(latency),
    serviceMs: percentiles(service),
    timedOut,
    errors,
    ...(firstError ? { firstError } : {}),
  };
}
