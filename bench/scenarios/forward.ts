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
 *
 * `forwardAll`, `bareTls` and the ledger are shipped code (src/bench/forward.ts), which `svc bench
 * forward` runs against an in-process TLS receiver instead of rsyslog.
 */
import { open, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rsyslogMissing, startRsyslog } from '../../test/helpers/rsyslog.js';
import { filelogKind } from '../../src/core/connectors/kinds/filelog.js';
import { syslogKind } from '../../src/core/connectors/kinds/syslog.js';
import type { KindContext } from '../../src/core/connectors/kinds/types.js';
import { ledgerDevice } from '../../src/encoders/ledger-fields.js';
import { encoderFor } from '../../src/encoders/registry.js';
import { octetCountingFrame } from '../../src/encoders/syslog.js';
import { readRange } from '../../src/ledger/ledger-store.js';
import { openStore } from '../../src/store/store.js';
import { bareTls, buildLedger, FORWARD_BATCH, FORWARD_TENANT, forwardAll } from '../../src/bench/forward.js';
import { BenchRefusal } from '../lib/server.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';

const TENANT = FORWARD_TENANT;
const BATCH = FORWARD_BATCH;
const VERSION = 'bench';
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

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
    await buildLedger(dataDir, n);
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
