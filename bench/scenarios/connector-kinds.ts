/**
 * Scenario `connector-kinds` (issue 32): records/s of the `siem`, `splunkhec` and `s3archive`
 * connector kinds, each calling `kind.open(config, ctx).send(batch)` directly (no runtime), into
 * loopback receivers over HTTPS: a node:https receiver answering 200 (siem) or HEC's
 * `{"text":"Success","code":0}` (splunkhec), and `s3rver` (s3archive, path-style, SigV4).
 * `SVC_BENCH_KINDS_RECORDS` real sealed ledger records (default 20,000), encoded with the
 * notification `json` encoder, in batches of `SVC_BENCH_KINDS_BATCH` (default 500), one batch in
 * flight. Baselines in the same run, same receivers, same TLS: a bare undici POST (PUT for s3rver,
 * unsigned) of the same bodies the kind sends (pre-built, for s3 pre-gzipped). Rounds interleave
 * kind and baseline; the figures are medians, the ratio the median of the per-round ratios.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { joinLines } from '../../src/core/connectors/kinds/http-common.js';
import { s3ArchiveKind } from '../../src/core/connectors/kinds/s3archive.js';
import { siemKind, siemBody } from '../../src/core/connectors/kinds/siem.js';
import { hecEventText, hecMetaPrefix, splunkHecKind } from '../../src/core/connectors/kinds/splunkhec.js';
import type { ConnectorSink, KindContext, SinkItem } from '../../src/core/connectors/kinds/types.js';
import { encoderFor } from '../../src/encoders/registry.js';
import { sealBatch, type ChainTail } from '../../src/ledger/chain.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { createSigner, generateKey } from '../../src/ledger/signers.js';
import { spkiPinSha256 } from '../../src/serve/tls.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';

const TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

function records(n: number): AuditRecord[] {
  const signer = createSigner('ed25519', generateKey('ed25519', 2048).privateKey);
  const out: AuditRecord[] = [];
  let tail: ChainTail | null = null;
  while (out.length < n) {
    const drafts = Array.from({ length: Math.min(1000, n - out.length) }, (_, i) => ({
      actor: `user:u${i % 7}`,
      actor_kind: 'user',
      action: 'agent.update',
      target_kind: 'agent',
      target_id: `agent-${out.length + i}`,
      meta: { i },
    }));
    const recs = sealBatch(tail, TENANT, drafts, signer);
    tail = { seq: recs.at(-1)!.seq, hash: recs.at(-1)!.hash };
    out.push(...recs);
  }
  return out;
}

export const scenario: Scenario = {
  name: 'connector-kinds',
  description:
    'records/s of the siem, splunkhec and s3archive connector kinds into loopback HTTPS receivers (s3rver for S3); baseline a bare ' +
    'undici request of the same bodies',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const n = Number(process.env['SVC_BENCH_KINDS_RECORDS'] ?? 20_000);
    const batch = Number(process.env['SVC_BENCH_KINDS_BATCH'] ?? 500);
    const rounds = ctx.options.rounds;
    const keyPath = join(ctx.tmpDir, 'key.pem');
    const certPath = join(ctx.tmpDir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        keyPath,
        '-out',
        certPath,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(certPath, 'utf8');
    const key = readFileSync(keyPath, 'utf8');
    const pin = spkiPinSha256(cert);

    ctx.log(`connector-kinds: sealing ${n} ledger records …`);
    const enc = encoderFor('notification', 'json');
    const device = { vendor: 'svc', product: 'control-plane', version: 'bench' };
    const items: SinkItem[] = records(n).map((r) => ({
      line: enc.encodeRecord(r, { device }),
      id: `${r.tenant}:${r.seq}`,
      tenant: r.tenant,
      seq: r.seq,
      time: r.occurred_at,
    }));
    const batches: SinkItem[][] = [];
    for (let i = 0; i < items.length; i += batch) batches.push(items.slice(i, i + batch));

    let received = 0;
    const server = createServer({ cert, key, keepAliveTimeout: 60_000 }, (req, res) => {
      req.on('data', (c: Buffer) => (received += c.length));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(req.url?.startsWith('/services/collector') ? '{"text":"Success","code":0}' : '{}');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const require = createRequire(import.meta.url);
    const S3rver = require('s3rver') as new (o: object) => {
      run(): Promise<{ port: number }>;
      close(): Promise<void>;
      httpServer: { closeAllConnections(): void };
    };
    const s3 = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: join(ctx.tmpDir, 's3'),
      key,
      cert,
      configureBuckets: [{ name: 'bench', configs: [] }],
    });
    const s3url = `https://127.0.0.1:${(await s3.run()).port}`;

    const secrets = new Map([
      ['secret:tok', 'Bearer bench-token'],
      ['secret:hec', '0f5c2a9e-1b2c-4d3e-8f90-123456789abc'],
      ['secret:ak', 'S3RVER'],
      ['secret:sk', 'S3RVER'],
    ]);
    const kctx: KindContext = {
      secret: async (ref) => secrets.get(ref) as string,
      dataDir: ctx.tmpDir,
      version: 'bench',
      log: { warn: () => undefined, info: () => undefined },
    };
    const sinks: Record<string, ConnectorSink> = {
      siem: await siemKind.open({ url: `${url}/ingest`, tls: { pin_sha256: pin }, auth_secret: 'secret:tok' }, kctx),
      splunkhec: await splunkHecKind.open({ url, tls: { pin_sha256: pin }, token_secret: 'secret:hec', sourcetype: '_json' }, kctx),
      s3archive: await s3ArchiveKind.open(
        {
          url: s3url,
          bucket: 'bench',
          force_path_style: true,
          tls: { pin_sha256: pin },
          access_key_id_secret: 'secret:ak',
          secret_access_key_secret: 'secret:sk',
        },
        kctx,
      ),
    };
    // the same bodies the kinds send, built before the clock starts
    const bodies: Record<string, Array<{ path: string; body: Buffer | string; method: 'POST' | 'PUT' }>> = {
      siem: batches.map((b) => ({ path: '/ingest', body: siemBody(b, 'ndjson'), method: 'POST' })),
      splunkhec: batches.map((b) => ({
        path: '/services/collector/event',
        body: joinLines(
          b.map((i) => hecEventText(i, hecMetaPrefix({ url, token_secret: '', sourcetype: '_json' }))),
          '\n',
          false,
        ),
        method: 'POST',
      })),
      s3archive: batches.map((b, k) => ({
        path: `/bench/baseline/${k}-${randomBytes(4).toString('hex')}.ndjson.gz`,
        body: gzipSync(joinLines(b.map((i) => i.line))),
        method: 'PUT',
      })),
    };
    const pool = (origin: string) => new Pool(origin, { connect: { ca: cert, checkServerIdentity: () => undefined }, connections: 1 });
    const pools = { http: pool(url), s3: pool(s3url) };

    const raw: Measurement[] = [];
    const baselines: Measurement[] = [];
    const ratios: Ratio[] = [];
    for (const kind of ['siem', 'splunkhec', 's3archive'] as const) {
      const kindRates: number[] = [];
      const baseRates: number[] = [];
      const sink = sinks[kind] as ConnectorSink;
      const p = kind === 's3archive' ? pools.s3 : pools.http;
      for (let r = 0; r <= rounds; r++) {
        const t0 = performance.now();
        for (const b of batches) {
          const res = await sink.send(b, new AbortController().signal);
          if (res.result !== 'delivered') throw new Error(`${kind}: ${res.result} ${res.error ?? ''}`);
        }
        const kindRate = n / ((performance.now() - t0) / 1000);
        const t1 = performance.now();
        for (const b of bodies[kind]!) {
          // s3rver takes an unsigned PUT (anonymous); the kind's request is SigV4-signed with a sha256 checksum
          const res = await p.request({
            path: b.path,
            method: b.method,
            body: b.body,
            headers:
              kind === 's3archive'
                ? { 'content-type': 'application/gzip' }
                : { 'content-type': 'application/x-ndjson', authorization: kind === 'siem' ? 'Bearer bench-token' : 'Splunk x' },
          });
          await res.body.dump();
          if (res.statusCode >= 300) throw new Error(`baseline ${kind}: HTTP ${res.statusCode}`);
        }
        const baseRate = n / ((performance.now() - t1) / 1000);
        if (r === 0) continue; // warm-up round
        kindRates.push(kindRate);
        baseRates.push(baseRate);
        ctx.log(`${kind} round ${r}: ${Math.round(kindRate)} records/s; bare undici ${Math.round(baseRate)} records/s`);
      }
      const k = median(kindRates);
      const b = median(baseRates);
      // the machine's load drifts between rounds: the ratio is the median of the per-round ratios
      const perRound = kindRates.map((x, i) => x / (baseRates[i] as number));
      raw.push({
        target: kind,
        path: `${n} records, batch ${batch}`,
        requestsPerSec: Math.round(k),
        p50Ms: 0,
        p99Ms: 0,
        detail: { rounds: kindRates.map(Math.round), per_round_ratio: perRound.map((x) => Number(x.toFixed(3))) },
      });
      baselines.push({
        target: `bare-undici-${kind === 's3archive' ? 'put' : 'post'}`,
        path: kind,
        requestsPerSec: Math.round(b),
        p50Ms: 0,
        p99Ms: 0,
        detail: { rounds: baseRates.map(Math.round) },
      });
      ratios.push({
        name: `${kind}/bare-undici`,
        path: 'records/s (median of per-round ratios)',
        requestsPerSec: Number(median(perRound).toFixed(3)),
        p50: 0,
        p99: 0,
      });
    }
    for (const s of Object.values(sinks)) await s.close();
    await pools.http.close();
    await pools.s3.close();
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
    s3.httpServer.closeAllConnections();
    await s3.close();
    return {
      raw,
      baselines,
      ratios,
      subject: {
        records: n,
        batch,
        format: 'json',
        bytes_received_by_https_receiver: received,
        body_sha256_sample: createHash('sha256').update(bodies['siem']![0]!.body).digest('hex').slice(0, 16),
      },
      notes: [
        "The kinds are called directly (no delivery engine, no store): this is the kind's own cost over a bare client.",
        'siem/splunkhec: the kind builds the body (NDJSON / HEC event objects as text) inside the clock; the baseline posts the same ' +
          'bytes pre-built.',
        's3archive: the kind gzips, hashes and SigV4-signs inside the clock (and sends x-amz-checksum-sha256); the baseline PUTs ' +
          'pre-gzipped bodies unsigned. s3rver writes every object to disk in both.',
        'Receivers run in the bench process and share its CPU; the machine is shared by other work: figures are noisy, ratios are ' +
          'what to read.',
      ],
    };
  },
};
