/**
 * The export over real HTTPS (native uWS adapter, real SQLite file, real export pool): memory stays
 * flat on an export far larger than the bound, and a client that disconnects stops the work at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { App } from '../../../src/http/app.js';
import type { RequestContext } from '../../../src/http/context.js';
import { listenHttp, loadUws, type RunningHttp } from '../../../src/http/uws-adapter.js';
import { RecordingAuditSink } from '../../../src/ledger/audit-sink.js';
import type { Services } from '../../../src/serve/services.js';
import { loadOrCreateTls, type TlsMaterial } from '../../../src/serve/tls.js';
import { AuditExporter, exportSourceFor } from '../../../src/core/audit-export/exporter.js';
import type { ExportRunner } from '../../../src/core/audit-export/export-stream.js';
import { auditExportRoutes } from '../../../src/core/audit-export/routes.js';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { tempDir } from '../../helpers/server.js';
import { fillLedger, TENANT } from './fixtures.js';

const N = 40_000;
const MB = 1024 * 1024;

/** The real exporter, counting the pages it hands to the pool (to see when work stops). */
class CountingExporter extends AuditExporter {
  dispatched = 0;
  override runner(): ExportRunner {
    const inner = super.runner();
    return { ...inner, encodePage: (req) => ((this.dispatched++), inner.encodePage(req)) };
  }
}

describe('audit export over HTTPS (sqlite)', () => {
  let ts: TestStore;
  let exporter: CountingExporter;
  let sink: RecordingAuditSink;
  let server: RunningHttp;
  let tls: TlsMaterial;
  let dir: string;

  before(async () => {
    assert.equal(loadUws().engine, 'uws-native', 'these tests need the native uWS engine');
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    await fillLedger(ts.store, TENANT, N);
    exporter = new CountingExporter({ source: exportSourceFor(ts.config), version: '1.0.0', threads: 2, pageSize: 256 });
    sink = new RecordingAuditSink();
    const services = { store: ts.store, audit: sink, auditExport: exporter } as unknown as Services;
    const authenticate = async (ctx: RequestContext) => {
      (ctx as { tenant?: string }).tenant = TENANT;
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
  });

  after(async () => {
    await server?.close(1000);
    await exporter?.close();
    await ts?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function get(
    path: string,
    onData: (chunk: Buffer, req: import('node:http').ClientRequest) => void,
  ): Promise<{ status: number; closed: 'end' | 'aborted' }> {
    return new Promise((resolve, reject) => {
      const req = https.get({ host: '127.0.0.1', port: server.port, path, ca: tls.certPem, agent: false }, (res) => {
        res.on('data', (c: Buffer) => onData(c, req));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, closed: 'end' }));
        res.on('aborted', () => resolve({ status: res.statusCode ?? 0, closed: 'aborted' }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, closed: 'aborted' }));
      });
      req.on('error', (err) => (req.destroyed ? resolve({ status: 0, closed: 'aborted' }) : reject(err)));
    });
  }

  /** Downloads in a child process, so only the server's memory is measured here. */
  function download(path: string): Promise<{ status: number; bytes: number; tail: string }> {
    const script = `
      const https = require('node:https');
      https.get({ host: '127.0.0.1', port: ${server.port}, path: ${JSON.stringify(path)}, ca: process.env.CA, agent: false }, (res) => {
        let bytes = 0, tail = '';
        res.on('data', (c) => { bytes += c.length; tail = (tail + c.toString('latin1')).slice(-200); });
        res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, bytes, tail })));
      }).on('error', (e) => { console.error(e); process.exit(1); });`;
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', script], {
        env: { ...process.env, CA: tls.certPem },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('exit', (code) =>
        code === 0
          ? resolve(JSON.parse(out) as { status: number; bytes: number; tail: string })
          : reject(new Error(`download exited ${code}`)),
      );
    });
  }

  test('memory stays flat: server RSS growth while streaming 3 large exports stays far below their size', async (t) => {
    // Warm-up: one full export brings the pool's threads (isolates grown to their working size,
    // SQLite caches) to steady state; flatness is about what the NEXT exports add.
    assert.equal((await download('/v1/audit/export?format=ocsf')).status, 200);
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    let bytes = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      for (let i = 0; i < 3; i++) {
        const res = await download('/v1/audit/export?format=ocsf');
        assert.equal(res.status, 200);
        assert.ok(res.tail.endsWith(`{"export_complete":true,"count":${N},"last_seq":${N}}\n`), res.tail);
        bytes += res.bytes;
      }
    } finally {
      clearInterval(sampler);
    }
    const growth = peak - rss0;
    t.diagnostic(`rss growth ${(growth / MB).toFixed(1)} MB for ${(bytes / MB).toFixed(1)} MB`);
    // The bound: a few pages in flight, the socket buffer and garbage awaiting collection, whatever
    // the size; a pipeline holding the export (or a share of it per record) would grow by ≥ 150 MB.
    assert.ok(bytes > 150 * MB, `${(bytes / MB).toFixed(1)} MB streamed`);
    assert.ok(growth < 48 * MB, `RSS grew ${(growth / MB).toFixed(1)} MB while streaming ${(bytes / MB).toFixed(1)} MB`);
  });

  test('a client that disconnects mid-stream stops the work at once and the partial export is audited', async () => {
    sink.appended.length = 0;
    exporter.dispatched = 0;
    let received = 0;
    let cutAt = 0;
    const res = await get('/v1/audit/export?format=cef', (c, req) => {
      received += c.length;
      if (received > 256 * 1024 && cutAt === 0) {
        cutAt = Date.now();
        req.destroy();
      }
    });
    assert.equal(res.closed, 'aborted');
    // The adapter wakes from backpressure on abort and closes the page iterator: the audit record
    // of the interrupted export is the proof the stream was stopped.
    const deadline = Date.now() + 5000;
    while (sink.appended.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(sink.appended.length, 1, 'the interrupted export is recorded');
    const stoppedAfter = Date.now() - cutAt;
    assert.ok(stoppedAfter < 2000, `stopped ${stoppedAfter} ms after the disconnect`);
    const meta = sink.appended[0]?.draft.meta as { complete: boolean; count: number };
    assert.equal(meta.complete, false);
    assert.ok(meta.count < N / 4, `count ${meta.count}`);
    const dispatchedAtStop = exporter.dispatched;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(exporter.dispatched, dispatchedAtStop, 'no page is started after the stop');
    // Pages started: what was written plus the bounded window (2 threads × 2), not the ~157 pages of the ledger.
    assert.ok(dispatchedAtStop <= Math.ceil(meta.count / 256) + 4 + 4, `dispatched ${dispatchedAtStop}`);
  });
});
