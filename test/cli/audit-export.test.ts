/**
 * `svc audit export` run as a user runs it (the built binary) against a real export over HTTPS
 * (uWS adapter, SQLite ledger, export pool), and against servers that cut the stream.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { App } from '../../src/http/app.js';
import type { RequestContext } from '../../src/http/context.js';
import { listenHttp, type RunningHttp } from '../../src/http/uws-adapter.js';
import { RecordingAuditSink } from '../../src/ledger/audit-sink.js';
import type { Services } from '../../src/serve/services.js';
import { loadOrCreateTls, type TlsMaterial } from '../../src/serve/tls.js';
import { AuditExporter, exportSourceFor } from '../../src/core/audit-export/exporter.js';
import { auditExportRoutes } from '../../src/core/audit-export/routes.js';
import { parseTerminator, renderProgress } from '../../src/cli/commands/audit/export.js';
import { createSqliteTestStore, type TestStore } from '../helpers/stores.js';
import { fillLedger, TENANT } from '../core/audit-export/fixtures.js';
import { jsonOut, runSvc, tempDir } from './harness.js';

const N = 700;

describe('svc audit export', () => {
  let ts: TestStore;
  let exporter: AuditExporter;
  let server: RunningHttp;
  let tls: TlsMaterial;
  let dir: string;
  let cutter: Server;
  let cutMode: 'short' | 'reset' = 'short';

  before(async () => {
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    await fillLedger(ts.store, TENANT, N);
    exporter = new AuditExporter({ source: exportSourceFor(ts.config), version: '1.0.0', threads: 1, pageSize: 128 });
    const services = { store: ts.store, audit: new RecordingAuditSink(), auditExport: exporter } as unknown as Services;
    const authenticate = async (ctx: RequestContext) => {
      (ctx as { tenant?: string }).tenant = ctx.headers['x-service-tenant'];
    };
    const app = new App({
      routes: auditExportRoutes,
      services,
      log: pino({ level: 'silent' }),
      tls: true,
      bodyLimit: 1024,
      timeoutMs: 5000,
      setupRequired: () => false,
      authenticate,
    });
    dir = tempDir();
    tls = await loadOrCreateTls({ dataDir: dir, hosts: ['127.0.0.1'] });
    server = await listenHttp(app, { host: '127.0.0.1', port: 0, tls: { certFile: tls.certPath, keyFile: tls.keyPath } });
    // A server whose export stream breaks: a clean end without the terminator, or a cut connection.
    cutter = createServer({ cert: tls.certPem, key: tls.keyPem }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.write('CEF:0|svc|control-plane|1.0.0|agent.create|agent.create|1|olvSeq=1\n'.repeat(50));
      if (cutMode === 'short') res.end();
      else setTimeout(() => res.destroy(), 50);
    });
    await new Promise<void>((ok) => cutter.listen(0, '127.0.0.1', ok));
  });

  after(async () => {
    await server?.close(1000);
    await new Promise((ok) => cutter?.close(ok));
    await exporter?.close();
    await ts?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const flags = (port: number) => [
    '--server',
    `https://127.0.0.1:${port}`,
    '--ca-cert',
    tls.certPath,
    '--token',
    'svck_test',
    '--tenant',
    TENANT,
  ];

  test('--out writes the export atomically (mode 0600) and -o json prints the summary', async () => {
    const out = join(tempDir(), 'audit.ndjson');
    const run = await runSvc(['audit', 'export', ...flags(server.port), '--format', 'ocsf', '--out', out, '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const body = readFileSync(out);
    const summary = jsonOut(run);
    assert.deepEqual(summary, {
      path: out,
      format: 'ocsf',
      count: N,
      last_seq: N,
      bytes: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const lines = body.toString('utf8').trimEnd().split('\n');
    assert.equal(lines.length, N + 1);
    assert.deepEqual(JSON.parse(lines[N] as string), { export_complete: true, count: N, last_seq: N });
    // Quiet with -o json, and no temporary file left beside the result.
    assert.equal(run.stderr, '');
    assert.deepEqual(readdirSync(join(out, '..')), ['audit.ndjson']);
  });

  test('without --out the lines stream to stdout; no progress bar when stderr is not a terminal', async () => {
    const run = await runSvc(['audit', 'export', ...flags(server.port), '--from', '101', '--to', '300']);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 201);
    assert.ok(lines[0]?.startsWith('CEF:0|svc|control-plane|'));
    assert.equal(lines[200], '# export-complete count=200 last_seq=300');
    assert.ok(!run.stderr.includes('\r'));
    assert.match(run.stderr, /exported 200 records .* last_seq 300/);
  });

  test('a stream that ends without its terminator exits 6 and leaves no file', async () => {
    for (const mode of ['short', 'reset'] as const) {
      cutMode = mode;
      const d = tempDir();
      const out = join(d, 'audit.cef');
      const run = await runSvc(['audit', 'export', ...flags((cutter.address() as AddressInfo).port), '--out', out, '-o', 'json']);
      assert.equal(run.code, 6, `${mode}: ${run.stderr}`);
      const err = jsonOut(run).error as { code: string; exit_code: number };
      assert.equal(err.exit_code, 6);
      if (mode === 'short') assert.equal(err.code, 'export_incomplete');
      assert.equal(existsSync(out), false, mode);
      assert.deepEqual(readdirSync(d), [], `${mode}: the partial temp file is removed`);
    }
  });

  test('a refused format exits 1 naming the accepted tokens, and no file is created', async () => {
    const d = tempDir();
    const run = await runSvc(['audit', 'export', ...flags(server.port), '--format', 'json', '--out', join(d, 'x')]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /bad_request: .*cef, leef, syslog, otlp, otlp_envelope, otlp_log_record, ocsf/);
    assert.deepEqual(readdirSync(d), []);
  });

  test('-o json without --out is a usage error (stdout carries the export)', async () => {
    const run = await runSvc(['audit', 'export', ...flags(server.port), '-o', 'json']);
    assert.equal(run.code, 2);
  });
});

describe('svc audit export: terminator and progress rendering', () => {
  test('parseTerminator reads both families and refuses anything else', () => {
    assert.deepEqual(parseTerminator('# export-complete count=12 last_seq=40'), { count: 12, last_seq: 40 });
    assert.deepEqual(parseTerminator('{"export_complete":true,"count":0,"last_seq":7}'), { count: 0, last_seq: 7 });
    for (const bad of [
      '',
      'CEF:0|svc|x',
      '# export-complete count=1',
      '{"export_complete":false,"count":1,"last_seq":1}',
      '{"resourceLogs":[]}',
      '{"export_complete":true,"count":"1","last_seq":1}',
    ]) {
      assert.equal(parseTerminator(bad), null, bad);
    }
  });

  test('renderProgress shows records of the range, MB, MB/s and an ETA from the rate so far', () => {
    const line = renderProgress({ records: 250_000, bytes: 200 * 1024 * 1024, elapsedMs: 10_000, expected: 1_000_000 }, 20);
    // A quarter done in 10 s → 30 s left at 25,000 records/s; 20 MB/s.
    assert.equal(line, '[#####---------------] 250,000/1,000,000 records  200.0 MB  20.0 MB/s  ETA 0:30');
    assert.equal(
      renderProgress({ records: 5, bytes: 0, elapsedMs: 0, expected: 10 }, 4),
      '[##--] 5/10 records  0.0 MB  0.0 MB/s  ETA --:--',
    );
    assert.equal(renderProgress({ records: 12, bytes: 1024 * 1024, elapsedMs: 2000 }), '12 records  1.0 MB  0.5 MB/s');
    assert.match(renderProgress({ records: 1, bytes: 1, elapsedMs: 1000, expected: 3601 }), /ETA 1:00:00$/);
  });
});
