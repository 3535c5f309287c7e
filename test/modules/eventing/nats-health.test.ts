/**
 * The NATS bus at startup and at readiness (issue 48 items 11 and 12), with real servers on
 * loopback: a port that accepts TCP and never speaks makes `svc serve` fail startup and exit 1
 * (a supervisor restarts it; before, it printed the failure and never exited); and a private
 * `nats-server` killed under a running replica turns `/readyz` and `/pod-readyz` 503 naming the
 * bus, then 200 again once NATS is back.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import net from 'node:net';
import { after, test } from 'node:test';
import { call, runServeExpectingExit, startServer, tempDir, type TestServer } from '../../helpers/server.js';
import { waitFor } from './harness.js';

const NATS_SERVER = '/usr/sbin/nats-server';
const noNatsServer = existsSync(NATS_SERVER) ? undefined : `${NATS_SERVER} is not installed`;

/** A port that accepts connections and never says a word (a NATS port behind a broken proxy, a wrong service). */
async function silentPort(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => void sockets.add(s.on('error', () => undefined)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A private nats-server with JetStream on `port`, resolved once it accepts clients. */
async function natsServer(port: number, storeDir: string): Promise<ChildProcess> {
  const child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const c = net.connect(port, '127.0.0.1');
        c.once('data', () => (c.destroy(), resolve(true)));
        c.once('error', () => resolve(false));
      }),
    10_000,
    'nats-server accepting clients',
  );
  return child;
}

test('a NATS port that accepts and never speaks: startup fails and the process exits 1', { timeout: 60_000 }, async () => {
  const silent = await silentPort();
  const dataDir = tempDir('svc-nats-silent-');
  try {
    const env = { SERVICE_BUS: 'nats', SERVICE_NATS_URL: `nats://127.0.0.1:${silent.port}` };
    const args = ['--data-dir', dataDir, '--listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0'];
    const run = await runServeExpectingExit(args, env, 45_000);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /startup failed: NATS at nats:\/\/127\.0\.0\.1:\d+ is unreachable \(SERVICE_NATS_URL\)/);
  } finally {
    await silent.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const readinessTitle = '/readyz and /pod-readyz say 503 while the bus is disconnected, 200 once it is back';
test(readinessTitle, { skip: noNatsServer, timeout: 60_000 }, async () => {
  const port = await freePort();
  const storeDir = tempDir('svc-nats-store-');
  let nats = await natsServer(port, storeDir);
  let server: TestServer | undefined;
  after(async () => {
    await server?.stop('SIGKILL');
    nats.kill('SIGKILL');
    rmSync(storeDir, { recursive: true, force: true });
  });
  server = await startServer({ timeoutMs: 45_000, env: { SERVICE_BUS: 'nats', SERVICE_NATS_URL: `nats://127.0.0.1:${port}` } });
  const s = server;
  const ready = async (path: string) => call(s, 'GET', path);
  const up = await ready('/readyz');
  assert.equal(up.status, 200, up.text);
  assert.deepEqual(up.json().checks.bus, { ok: true, kind: 'nats' });

  nats.kill('SIGKILL');
  await waitFor(async () => (await ready('/readyz')).status === 503, 15_000, '/readyz 503 once NATS is gone');
  for (const path of ['/readyz', '/pod-readyz']) {
    const down = await ready(path);
    assert.equal(down.status, 503, down.text);
    assert.equal(down.json().error.code, 'unavailable');
    assert.match(down.json().error.message, /^not ready: bus disconnected \(NATS at nats:\/\/127\.0\.0\.1:\d+; reconnecting\)$/);
  }
  // Liveness is not readiness: the process is fine, a supervisor must not restart it.
  assert.equal((await ready('/livez')).status, 200);

  nats = await natsServer(port, storeDir);
  await waitFor(async () => (await ready('/readyz')).status === 200, 20_000, '/readyz 200 once NATS is back');
});
