/**
 * `svc bench forward` (issue 36) and the measuring core `npm run bench -- forward` shares
 * (bench/scenarios/forward.ts imports `forwardAll`, `bareTls`, `draftAt` from here): the ledger
 * forwarder's path — read a range of a stored, signed ledger, encode every record with the
 * connector's encoder (`ledgerItems`, as the connector lane does) and hand batches of 5,000 to the
 * syslog kind over TLS (RFC 5425, octet counting, certificate verified against its CA).
 *
 * `svc bench forward` runs it in this process against a pre-built SQLite ledger in a temporary
 * directory, into a receiver of its own: a node:tls server on loopback (a throwaway self-signed
 * certificate from `svc serve`'s helper) that reads the octet-counted frames and counts records —
 * no rsyslog needed. Baseline: the same encoded, framed lines (built before any clock starts)
 * written by a bare `tls.connect` loop to the same receiver, one buffer per batch. Rounds alternate
 * the order (A B, B A, …) until `--duration` has passed; between runs the receiver must have counted
 * every record sent.
 */
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { ledgerItems } from '../core/connectors/ledger-items.js';
import { syslogKind } from '../core/connectors/kinds/syslog.js';
import type { ConnectorSink, KindContext } from '../core/connectors/kinds/types.js';
import { ledgerDevice } from '../encoders/ledger-fields.js';
import { encoderFor } from '../encoders/registry.js';
import { octetCountingFrame } from '../encoders/syslog.js';
import { Keyring } from '../ledger/keyring.js';
import { readRange } from '../ledger/ledger-store.js';
import type { AuditDraft } from '../ledger/record.js';
import { openStore, type Store } from '../store/store.js';
import { createWorkerPool } from '../workers/pool.js';
import { generateChain } from './ledger-chain.js';

export const FORWARD_TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';
/** the syslog and filelog kinds' maxBatch */
export const FORWARD_BATCH = 5000;
const VERSION = 'bench';
const ACTIONS = ['agent.create', 'agent.update', 'auth.login', 'token.revoke', 'policy.deny'];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export function draftAt(i: number): AuditDraft {
  return {
    actor: `user:u${i % 97}`,
    actor_kind: 'user',
    action: ACTIONS[i % ACTIONS.length] as string,
    target_kind: 'agent',
    target_id: `agent-${i % 5003}`,
    meta: { i, name: `agent ${i}`, labels: ['prod'] },
  };
}

/** The forwarder's path for every range of `n` records: read, encode, send; returns records/s. */
export async function forwardAll(
  store: Store,
  n: number,
  format: { surface: 'syslog_connector' | 'notification'; token: string },
  sink: ConnectorSink,
): Promise<number> {
  const enc = encoderFor(format.surface, format.token);
  const opts = { device: ledgerDevice(VERSION) };
  const t0 = performance.now();
  const none = new Set<number>();
  for (let from = 1; from <= n; from += FORWARD_BATCH) {
    const to = Math.min(n, from + FORWARD_BATCH - 1);
    const items = await ledgerItems(store, FORWARD_TENANT, from, to, none, enc, opts);
    const res = await sink.send(items, new AbortController().signal);
    if (res.result !== 'delivered') throw new Error(`${res.result}: ${res.error ?? ''}`);
  }
  return n / ((performance.now() - t0) / 1000);
}

/** A bare tls.connect loop writing pre-framed batches; bytes/s, done when the last write's callback ran. */
export async function bareTls(port: number, ca: Buffer | string, batches: Buffer[]): Promise<number> {
  const t0 = performance.now();
  const s = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
  await new Promise<void>((ok, ko) => (s.once('secureConnect', () => ok()), s.once('error', ko)));
  for (const b of batches) await new Promise<void>((ok, ko) => s.write(b, (err) => (err ? ko(err) : ok())));
  const rate = batches.reduce((a, b) => a + b.length, 0);
  const secs = (performance.now() - t0) / 1000;
  s.end();
  return rate / secs;
}

/** The syslog lines of records 1..n, octet-counting framed, one buffer per batch (the baseline's bytes). */
export async function framedBatches(store: Store, n: number): Promise<Buffer[]> {
  const enc = encoderFor('syslog_connector', 'syslog');
  const opts = { device: ledgerDevice(VERSION) };
  const frames: Buffer[] = [];
  for (let from = 1; from <= n; from += FORWARD_BATCH) {
    const recs = await store.withTenant(FORWARD_TENANT, (tx) => readRange(tx, FORWARD_TENANT, from, Math.min(n, from + FORWARD_BATCH - 1)));
    frames.push(Buffer.concat(recs.map((r) => octetCountingFrame(enc.encodeRecord(r, opts)))));
  }
  return frames;
}

/** Writes a signed chain of `n` records of `draftAt` into a new SQLite store in `dataDir`. */
export async function buildLedger(dataDir: string, n: number): Promise<void> {
  const keyring = await Keyring.open({ dataDir, env: {} });
  const pool = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
  const gen = await openStore({ backend: 'sqlite', dataDir, sqliteSynchronous: 'normal' });
  try {
    await gen.migrate();
    await generateChain(gen, pool, keyring, FORWARD_TENANT, n, (seq) => draftAt(seq - 1));
  } finally {
    await gen.close();
    await pool.close();
  }
}

/** An RFC 5425 receiver: TLS on loopback, octet-counted frames, each frame one record counted. */
export interface FrameReceiver {
  port: number;
  caPem: string;
  /** frames (records) received so far */
  records(): number;
  /** resolves once `n` records have been received in all; rejects after `ms` */
  waitFor(n: number, ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFrameReceiver(): Promise<FrameReceiver> {
  const { issueSelfSigned } = await import('../serve/tls-generate.js');
  const { certPem, keyPem } = await issueSelfSigned({ sans: { dns: ['localhost'], ips: ['127.0.0.1'] } });
  let records = 0;
  let malformed: Error | undefined;
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({ cert: certPem, key: keyPem, minVersion: 'TLSv1.2' }, (sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    let pending: Buffer = Buffer.alloc(0);
    sock.on('data', (chunk: Buffer) => {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      let at = 0;
      for (;;) {
        const sp = buf.indexOf(0x20, at);
        if (sp < 0 || sp - at > 10) break;
        const len = Number(buf.toString('latin1', at, sp));
        if (!Number.isInteger(len) || len <= 0) {
          malformed = new Error(`receiver: malformed frame header ${JSON.stringify(buf.toString('latin1', at, sp))}`);
          sock.destroy();
          return;
        }
        if (buf.length < sp + 1 + len) break;
        at = sp + 1 + len;
        records++;
      }
      pending = buf.subarray(at);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    caPem: certPem,
    records: () => records,
    async waitFor(n, ms) {
      const end = Date.now() + ms;
      while (records < n) {
        if (malformed) throw malformed;
        if (Date.now() > end) throw new Error(`the receiver counted ${records} of ${n} records`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface ForwardOptions {
  /** temporary directory: keyring, SQLite store, CA file */
  dataDir: string;
  /** records in the ledger, forwarded whole in every run */
  records: number;
  /** rounds (one forward run and one baseline run each) continue until this much time has passed (one round at least) */
  durationMs: number;
  /** unrecorded rounds before (one at least when > 0) */
  warmupMs: number;
  log(m: string): void;
  onProgress?(p: { elapsedS: number; rounds: number }): void;
}

export interface ForwardResult {
  records: number;
  batch: number;
  rounds: number;
  durationS: number;
  /** records/s of each measured round: the forwarder (syslog kind) and the bare tls.connect loop */
  forwardRates: number[];
  bareRates: number[];
  /** medians, records/s */
  forwardPerSec: number;
  barePerSec: number;
  /** median of the per-round ratios forward / bare */
  ratio: number;
  /** framed bytes sent per run */
  bytesPerRun: number;
  /** records the receiver counted over the whole run (warm-up included), and the records sent */
  received: number;
  sent: number;
}

/** `svc bench forward`: build the ledger, start the receiver, alternate forwarder and baseline runs. */
export async function runForward(o: ForwardOptions): Promise<ForwardResult> {
  const n = o.records;
  o.log(`forward: generating a signed ledger of ${n} records …`);
  await buildLedger(o.dataDir, n);
  const store = await openStore({ backend: 'sqlite', dataDir: o.dataDir });
  const rx = await startFrameReceiver();
  try {
    const caFile = join(o.dataDir, 'receiver-ca.pem');
    await writeFile(caFile, rx.caPem, { mode: 0o600 });
    const frames = await framedBatches(store, n);
    const bytesPerRun = frames.reduce((a, b) => a + b.length, 0);
    const kctx: KindContext = {
      secret: async () => '',
      dataDir: o.dataDir,
      version: VERSION,
      log: { warn: () => undefined, info: () => undefined },
    };
    // the receiver is in this process on loopback: the egress guard allows it under the development flag only
    process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';
    let sent = 0;
    const drained = async (): Promise<void> => {
      sent += n;
      await rx.waitFor(sent, 120_000);
    };
    const subject = async (): Promise<number> => {
      const sys = await syslogKind.open({ host: '127.0.0.1', port: rx.port, ca_file: caFile, server_name: 'localhost' }, kctx);
      try {
        return await forwardAll(store, n, { surface: 'syslog_connector', token: 'syslog' }, sys);
      } finally {
        await sys.close();
        await drained();
      }
    };
    const baseline = async (): Promise<number> => {
      const bytesPerSec = await bareTls(rx.port, rx.caPem, frames);
      await drained();
      return n * (bytesPerSec / bytesPerRun);
    };
    const round = async (r: number): Promise<[number, number]> => {
      if (r % 2 === 0) {
        const a = await subject();
        return [a, await baseline()];
      }
      const b = await baseline();
      return [await subject(), b];
    };
    let r = 0;
    if (o.warmupMs > 0) {
      const end = performance.now() + o.warmupMs;
      do await round(r++);
      while (performance.now() < end);
      o.log(`warm-up: ${r} rounds`);
    }
    const forwardRates: number[] = [];
    const bareRates: number[] = [];
    const t0 = performance.now();
    do {
      const [a, b] = await round(r++);
      forwardRates.push(a);
      bareRates.push(b);
      o.onProgress?.({ elapsedS: (performance.now() - t0) / 1000, rounds: forwardRates.length });
    } while (performance.now() - t0 < o.durationMs);
    const durationS = (performance.now() - t0) / 1000;
    return {
      records: n,
      batch: FORWARD_BATCH,
      rounds: forwardRates.length,
      durationS: Number(durationS.toFixed(2)),
      forwardRates: forwardRates.map(Math.round),
      bareRates: bareRates.map(Math.round),
      forwardPerSec: Math.round(median(forwardRates)),
      barePerSec: Math.round(median(bareRates)),
      ratio: Number(median(forwardRates.map((a, i) => a / (bareRates[i] as number))).toFixed(3)),
      bytesPerRun,
      received: rx.records(),
      sent,
    };
  } finally {
    await rx.close();
    await store.close();
  }
}
