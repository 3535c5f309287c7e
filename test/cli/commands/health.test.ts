import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jsonOut, makeCert, runSvc, startFakeServer } from '../harness.js';
import type { FakeServer, TestCert } from '../harness.js';

describe('svc health against a real node:https server', () => {
  let cert: TestCert;
  let server: FakeServer;
  before(async () => {
    cert = makeCert();
    server = await startFakeServer(cert);
  });
  after(async () => server.close());

  const health = (...args: string[]) => runSvc(['health', '--server', server.url, '--pin-sha256', cert.pinBase64, ...args]);
  const ready = { status: 'ready', checks: { store: { ok: true, backend: 'sqlite', migrations: { current: 1, expected: 1 } } } };
  const unavailable = { error: { code: 'unavailable', message: 'not ready: store unreachable' } };

  it('exits 0 when live and ready, with both raw documents under -o json', async () => {
    server.routes.set('GET /healthz', { status: 200, body: { status: 'ok' } });
    server.routes.set('GET /readyz', { status: 200, body: ready });
    const run = await health('-o', 'json');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(jsonOut(run), {
      ready: true,
      healthz: { http_status: 200, body: { status: 'ok' } },
      readyz: { http_status: 200, body: ready },
    });
  });

  it('exits 7 when /readyz answers 503, and says why', async () => {
    server.routes.set('GET /healthz', { status: 200, body: { status: 'ok' } });
    server.routes.set('GET /readyz', { status: 503, body: unavailable });
    const json = await health('-o', 'json');
    assert.equal(json.code, 7);
    assert.deepEqual(jsonOut(json).readyz, { http_status: 503, body: unavailable });
    assert.equal(jsonOut(json).ready, false);
    const text = await health();
    assert.equal(text.code, 7);
    assert.match(text.stdout, /not ready \(HTTP 503\): unavailable: not ready: store unreachable/);
  });

  it('exits 6 when /healthz fails with a 5xx or the server is unreachable', async () => {
    server.routes.set('GET /healthz', { status: 500, body: { error: { code: 'internal', message: 'internal error' } } });
    assert.equal((await health()).code, 6);
    const gone = await runSvc(['health', '--server', 'https://127.0.0.1:1']);
    assert.equal(gone.code, 6);
    assert.match(gone.stderr, /^svc: unreachable: /);
  });
});
