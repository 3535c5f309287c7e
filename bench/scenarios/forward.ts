/**
 * Scenario `forward` (issue 32, `bench forward`): the ledger forwarder's path — read a range of a
 * stored, signed ledger and encode every record with the connector's encoder (`ledgerItems`, as the
 * connector lane does; integrity fields verbatim) and hand batches of 5,000 to the kind — over a
 * pre-built SQLite ledger of `SVC_BENCH_FORWARD_RECORDS` records (default 100,000), into:
 * - `syslog`: a real Debian `rsyslogd` over TLS (RFC 5425, octet counting; certificate verified
 *   against its CA), started by this run (test/helpers/rsyslog.ts);
 * - `filelog`: a file in the scratch directory, `fsync: batch` (the default).
 * Baseline in the same run: the same encoded, framed lines (built before the clock starts) written by
 * a bare `tls.connect` loop into the same rsyslog, one buffer per batch; and for filelog a bare
 * `FileHandle.write` + `sync` of the same lines. Rounds interleave subject and baseline; round 0 is a
 * warm-up. Between runs the harness waits until rsyslog has written everything it was sent.
 *
 * Not measured here: the delivery engine's bookkeeping (claiming and marking one `event_deliveries`
 * row per batch of 5,000) and a concurrent ingest load; the sub-mode `forward-lag`
 * (forward-lag.ts) runs the whole server, connector and engine included, under paced gRPC ingest
 * and reports the forwarder's lag.
 */
import { open, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import { rsyslogMissing, startRsyslog } from '../../test/helpers/rsyslog.js';
import { ledgerItems } from '../../src/core/connectors/ledger-items.js';
import { filelogKind } from '../../src/core/connectors/kinds/filelog.js';
import { syslogKind } from '../../src/core/connectors/kinds/syslog.js';
import type { ConnectorSink, KindContext } from '../../src/core/connectors/kinds/types.js';
import { ledgerDevice } from '../../src/encoders/ledger-fields.js';
import { encoderFor } from '../../src/encoders/registry.js';
import { octetCountingFrame } from '../../src/encoders/syslog.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { readRange } from '../../src/ledger/ledger-store.js';
import type { AuditDraft } from '../../src/ledger/record.js';
import { openStore, type Store } from '../../src/store/store.js';
import { createWorkerPool } from '../../src/workers/pool.js';
import { generateChain } from '../lib/ledger-chain.js';
import { BenchRefusal } from '../lib/server.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';

const TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';
const BATCH = 5000; // the syslog and filelog kinds' maxBatch
const VERSION = 'bench';
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ACTIONS = ['agent.create', 'agent.update', 'auth.login', 'token.revoke', 'policy.deny'];

function draftAt(i: number): AuditDraft {
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
async function forwardAll(
  store: Store,
  n: number,
  format: { surface: 'syslog_connector' | 'notification'; token: string },
  sink: ConnectorSink,
): Promise<number> {
  const enc = encoderFor(format.surface, format.token);
  const opts = { device: ledgerDevice(VERSION) };
  const t0 = performance.now();
  const none = new Set<number>();
  for (let from = 1; from <= n; from += BATCH) {
    const to = Math.min(n, from + BATCH - 1);
    const items = await ledgerItems(store, TENANT, from, to, none, enc, opts);
    const res = await sink.send(items, new AbortController().signal);
    if (res.result !== 'delivered') throw new Error(`${res.result}: ${res.error ?? ''}`);
  }
  return n / ((performance.now() - t0) / 1000);
}

/** A bare tls.connect loop writing pre-framed batches; done when the last write's callback ran. */
async function bareTls(port: number, ca: Buffer, batches: Buffer[]): Promise<number> {
  const t0 = performance.now();
  const s = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
  await new Promise<void>((ok, ko) => (s.once('secureConnect', () => ok()), s.once('error', ko)));
  for (const b of batches) await new Promise<void>((ok, ko) => s.write(b, (err) => (err ? ko(err) : ok())));
  const rate = batches.reduce((a, b) => a + b.length, 0);
  const secs = (performance.now() - t0) / 1000;
  s.end();
  return rate / secs;
}

export const scenario: Scenario = {
  name: 'forward',
  description:
    'ledger forwarder path (read + encode + send) into rsyslog over TLS and into filelog; baseline a bare tls.connect loop of the ' +
    'same framed lines',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const missing = rsyslogMissing();
    if (missing) throw new BenchRefusal(missing);
    const n = Number(process.env['SVC_BENCH_FORWARD_RECORDS'] ?? 100_000);
    const rounds = ctx.options.rounds;
    const dataDir = join(ctx.tmpDir, 'svc-data');

    ctx.log(`forward: generating a signed ledger of ${n} records …`);
    const keyring = await Keyring.open({ dataDir, env: {} });
    const pool = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
    const gen = await openStore({ backend: 'sqlite', dataDir, sqliteSynchronous: 'normal' });
    try {
      await gen.migrate();
      await generateChain(gen, pool, keyring, TENANT, n, (seq) => draftAt(seq - 1));
    } finally {
      await gen.close();
      await pool.close();
    }
    const store = await openStore({ backend: 'sqlite', dataDir });

    const rs = await startRsyslog();
    const ca = readFileSync(rs.caFile);
    // The baseline's bytes: the same encoder, the same framing, built before any clock starts.
    const enc = encoderFor('syslog_connector', 'syslog');
    const opts = { device: ledgerDevice(VERSION) };
    const frames: Buffer[] = [];
    let lineBytes = 0;
    for (let from = 1; from <= n; from += BATCH) {
      const recs = await store.withTenant(TENANT, (tx) => readRange(tx, TENANT, from, Math.min(n, from + BATCH - 1)));
      const lines = recs.map((r) => enc.encodeRecord(r, opts));
      lineBytes += lines.reduce((a, l) => a + Buffer.byteLength(l) + 1, 0);
      frames.push(Buffer.concat(lines.map(octetCountingFrame)));
    }
    const fileLines: Buffer[] = [];
    const fenc = encoderFor('notification', 'cef');
    for (let from = 1; from <= n; from += BATCH) {
      const recs = await store.withTenant(TENANT, (tx) => readRange(tx, TENANT, from, Math.min(n, from + BATCH - 1)));
      fileLines.push(Buffer.from(recs.map((r) => fenc.encodeRecord(r, opts) + '\n').join('')));
    }

    let expected = 0;
    const drained = async (): Promise<void> => {
      expected += lineBytes;
      const deadline = Date.now() + 300_000;
      while ((await stat(rs.rawFile).catch(() => ({ size: 0 }))).size < expected) {
        if (Date.now() > deadline) throw new Error(`rsyslog wrote ${(await stat(rs.rawFile)).size} of ${expected} bytes`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    const kctx: KindContext = {
      secret: async () => '',
      dataDir: ctx.tmpDir,
      version: VERSION,
      log: { warn: () => undefined, info: () => undefined },
    };
    const rates: Record<string, number[]> = { syslog: [], bareTls: [], filelog: [], bareFile: [] };
    const perRound: Record<string, number[]> = { syslog: [], filelog: [], filelogFile: [] };
    try {
      for (let r = 0; r <= rounds; r++) {
        const sys = await syslogKind.open({ host: '127.0.0.1', port: rs.tlsPort, ca_file: rs.caFile, server_name: 'localhost' }, kctx);
        const sysRate = await forwardAll(store, n, { surface: 'syslog_connector', token: 'syslog' }, sys);
        await sys.close();
        await drained();
        const base = await bareTls(rs.tlsPort, ca, frames);
        const baseRate = n * (base / frames.reduce((a, b) => a + b.length, 0));
        await drained();
        const flog = await filelogKind.open({ path: `out/round-${r}.cef` }, kctx);
        const fileRate = await forwardAll(store, n, { surface: 'notification', token: 'cef' }, flog);
        await flog.close();
        const t0 = performance.now();
        const fh = await open(join(ctx.tmpDir, `bare-${r}.cef`), 'a', 0o600);
        for (const b of fileLines) {
          await fh.write(b);
          await fh.sync();
        }
        await fh.close();
        const bareFileRate = n / ((performance.now() - t0) / 1000);
        ctx.log(
          `round ${r}${r === 0 ? ' (warm-up)' : ''}: syslog ${Math.round(sysRate)}/s, bare tls ${Math.round(baseRate)}/s, filelog ` +
            `${Math.round(fileRate)}/s, bare file ${Math.round(bareFileRate)}/s`,
        );
        if (r === 0) continue;
        rates['syslog']!.push(sysRate);
        rates['bareTls']!.push(baseRate);
        rates['filelog']!.push(fileRate);
        rates['bareFile']!.push(bareFileRate);
        perRound['syslog']!.push(sysRate / baseRate);
        perRound['filelog']!.push(fileRate / baseRate);
        perRound['filelogFile']!.push(fileRate / bareFileRate);
      }
    } finally {
      await store.close();
      await rs.close();
    }
    const m = (k: string): number => Math.round(median(rates[k]!));
    const row = (target: string, path: string, k: string): Measurement => ({
      target,
      path,
      requestsPerSec: m(k),
      p50Ms: 0,
      p99Ms: 0,
      detail: { rounds: rates[k]!.map(Math.round) },
    });
    const ratio = (name: string, k: string): Ratio => ({
      name,
      path: 'records/s (median of per-round ratios)',
      requestsPerSec: Number(median(perRound[k]!).toFixed(3)),
      p50: 0,
      p99: 0,
    });
    return {
      raw: [
        row('forward-syslog-tls', `${n} records → rsyslog (TLS, octet counting)`, 'syslog'),
        row('forward-filelog', `${n} records → file (cef, fsync per batch)`, 'filelog'),
      ],
      baselines: [
        row('bare-tls-connect', 'same framed syslog lines, pre-built', 'bareTls'),
        row('bare-file-write', 'same cef lines, pre-built, fsync per batch', 'bareFile'),
      ],
      ratios: [
        ratio('forward-syslog/bare-tls', 'syslog'),
        ratio('forward-filelog/bare-tls', 'filelog'),
        ratio('forward-filelog/bare-file', 'filelogFile'),
      ],
      subject: {
        records: n,
        batch: BATCH,
        store: 'sqlite',
        syslog_format: 'syslog',
        filelog_format: 'cef',
        syslog_bytes_per_round: lineBytes,
      },
      notes: [
        "Subject: ledgerItems (read + encode, the lane's code) + kind.send per batch of 5,000, in this process; " +
          "the delivery engine's row bookkeeping is " +
          'not inside the clock.',
        "syslog counts a batch sent once the kernel took every byte (the kind's definition of delivered); the bare loop the same; " +
          'the harness then waits until rsyslog has written it all before the next run.',
        'rsyslogd runs on the same 2 shared cores (it writes each record twice: raw and parsed JSON): figures are noisy, ratios are ' +
          'what to read.',
      ],
    };
  },
};
