/**
 * The client against the real `svc serve` (started by the shared test helper on ephemeral
 * loopback ports with a fresh data dir and its generated self-signed certificate).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer } from '../../helpers/server.js';
import type { TestServer } from '../../helpers/server.js';
import { jsonOut, runSvc, tempDir } from '../harness.js';

describe('svc status and svc health against svc serve', () => {
  let server: TestServer;
  let caPath: string;
  before(async () => {
    server = await startServer();
    assert.ok(server.certPem && server.pinSha256, 'serve generated a certificate and logged its pin');
    caPath = join(tempDir(), 'ca.pem');
    writeFileSync(caPath, server.certPem);
  });
  after(async () => {
    await server.stop();
  });

  it('svc status trusts the logged pin_sha256 and maps the document to the exit code', async () => {
    const run = await runSvc(['status', '--server', server.url, '--pin-sha256', server.pinSha256 as string, '-o', 'json']);
    const doc = jsonOut(run);
    assert.equal(typeof doc.status, 'string');
    assert.equal(run.code, doc.status === 'ok' ? 0 : 7, run.stderr);
    assert.ok(doc.components && typeof doc.components === 'object');
  });

  it('svc health trusts the generated certificate via --ca-cert (host name checked) and reports ready', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const run = await runSvc(['health', '--server', `https://${host}:${server.port}`, '--ca-cert', caPath, '-o', 'json']);
      assert.equal(run.code, 0, run.stderr);
      const doc = jsonOut(run);
      assert.equal(doc.ready, true);
      assert.equal(doc.healthz.http_status, 200);
      assert.equal(doc.readyz.http_status, 200);
    }
  });

  it('without trust the client refuses the self-signed server (exit 6)', async () => {
    const run = await runSvc(['health', '--server', server.url]);
    assert.equal(run.code, 6);
    assert.match(run.stderr, /^svc: tls_error: /);
  });
});
