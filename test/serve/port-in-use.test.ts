/**
 * Issue 30 item 1: a second `svc serve` on the explicit port of a running one must fail at startup
 * (exit 1, a message naming the address), for HTTP and for gRPC, whatever the second one binds.
 * uWebSockets.js listens with SO_REUSEPORT unless told otherwise, and Linux then lets a second
 * process of the same user share the port: handshakes were split between two servers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'undici';
import { runServeExpectingExit, startServer, tempDir, type TestServer } from '../helpers/server.js';

/** A port that was free a moment ago (the kernel's pick), for an explicit --listen. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

let first: TestServer;
let httpPort: number;
let grpcPort: number;

before(async () => {
  httpPort = await freePort();
  grpcPort = await freePort();
  first = await startServer({ args: ['--listen', `127.0.0.1:${httpPort}`, '--grpc-listen', `127.0.0.1:${grpcPort}`] });
  assert.equal(first.port, httpPort);
  assert.equal(first.grpcPort, grpcPort);
});

after(async () => {
  if (first) await first.stop();
});

for (const host of ['127.0.0.1', '0.0.0.0', 'localhost']) {
  test(`port in use: a second svc serve on the first one's HTTP port (bound as ${host}) exits 1 naming the address`, async () => {
    const dir = tempDir();
    try {
      const r = await runServeExpectingExit(['--data-dir', dir, '--listen', `${host}:${httpPort}`, '--grpc-listen', '127.0.0.1:0']);
      assert.equal(r.code, 1, `exit code; stderr:\n${r.stderr}\nstdout:\n${r.stdout}`);
      assert.match(r.stderr, new RegExp(`cannot listen on ${host.replace(/\./g, '\\.')}:${httpPort}`));
      assert.doesNotMatch(r.stdout, /is ready/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`port in use: a second svc serve on the first one's gRPC port (bound as ${host}) exits 1 naming the address`, async () => {
    const dir = tempDir();
    try {
      const r = await runServeExpectingExit(['--data-dir', dir, '--listen', '127.0.0.1:0', '--grpc-listen', `${host}:${grpcPort}`]);
      assert.equal(r.code, 1, `exit code; stderr:\n${r.stderr}\nstdout:\n${r.stdout}`);
      assert.match(r.stderr, new RegExp(`cannot listen for gRPC on ${host.replace(/\./g, '\\.')}:${grpcPort}`));
      assert.doesNotMatch(r.stdout, /is ready/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('port in use: the first server still answers every request itself afterwards', async () => {
  for (let i = 0; i < 20; i++) {
    const res = await request(`${first.url}/healthz`, { dispatcher: first.dispatcher });
    assert.equal(res.statusCode, 200);
    await res.body.text();
  }
});
