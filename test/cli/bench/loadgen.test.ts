/**
 * The load generator of `svc bench` is open loop and coordinated-omission aware: against a server
 * that takes 50 ms per request on one connection (20 req/s), asking 100 req/s for 1 s queues the
 * requests, and their latency counts that queueing from when each was due, while the service time
 * stays near 50 ms. A closed-loop tool would report ~50 ms for both.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { runLoad } from '../../../src/bench/loadgen.js';

async function slowServer(delayMs: number): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    setTimeout(() => res.end('ok'), delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('latency includes the queueing delay behind a slow server', async () => {
  const s = await slowServer(50);
  try {
    const r = await runLoad({
      origin: s.origin,
      connections: 1,
      rate: 100,
      durationMs: 1_000,
      graceMs: 12_000,
      request: () => ({ method: 'GET', path: '/' }),
    });
    assert.equal(r.due, 100);
    assert.equal(r.ok, 100, JSON.stringify(r));
    assert.equal(r.timedOut, 0);
    // 100 requests served at ≤ 20/s: the last one completes ≥ 5 s after t0 but was due at 0.99 s.
    assert.ok(r.latencyMs.max >= 3_500, `max latency ${r.latencyMs.max} ms should include ~4 s of queueing`);
    assert.ok(r.latencyMs.p50 >= 1_500, `p50 latency ${r.latencyMs.p50} ms should include queueing`);
    assert.ok(r.serviceMs.p50 < 1_000, `service p50 ${r.serviceMs.p50} ms should be near 50 ms`);
    assert.ok(r.latencyMs.p50 > 3 * r.serviceMs.p50);
    assert.ok(r.maxQueued >= 50, `queue ${r.maxQueued}`);
    assert.ok(r.achievedRate < 30, `achieved ${r.achievedRate}/s cannot exceed the server's ~20/s`);
  } finally {
    await s.close();
  }
});

test('below capacity the latency is the service time, and the run is bounded', async () => {
  const s = await slowServer(5);
  try {
    const r = await runLoad({
      origin: s.origin,
      connections: 4,
      rate: 50,
      durationMs: 1_000,
      request: () => ({ method: 'GET', path: '/' }),
    });
    assert.equal(r.ok, 50);
    assert.ok(r.latencyMs.p50 < 500, `p50 ${r.latencyMs.p50}`);
    assert.ok(r.achievedRate > 20, `achieved ${r.achievedRate}`);
  } finally {
    await s.close();
  }
});

test('requests a server never answers are counted as timed out with their age, not dropped', async () => {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const r = await runLoad({
      origin: `http://127.0.0.1:${port}`,
      connections: 2,
      rate: 20,
      durationMs: 500,
      graceMs: 500,
      request: () => ({ method: 'GET', path: '/' }),
    });
    assert.equal(r.ok, 0);
    assert.equal(r.timedOut, r.due);
    assert.ok(r.latencyMs.max >= 500, `max ${r.latencyMs.max}`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
