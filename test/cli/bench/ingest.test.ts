/**
 * `svc bench ingest` against a scratch server it starts on this host: collector-equivalent gRPC
 * clients push batches over Ingest/Push; every ACCEPTED ack names its own ledger record and the
 * tenant's head grew by at least the acked batches. Usage errors exit 2 before any load.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { jsonOut, runSvc, tempDir } from '../harness.js';

test('svc bench ingest --rate: acked observations are durable, one ledger record per acked batch', async () => {
  const report = join(tempDir('svc-bench-ingest-'), 'report.md');
  const run = await runSvc(
    ['bench', 'ingest', '--duration', '2s', '--warmup', '0s', '--rate', '1000', '--connections', '2', '--batch', '100', '--report', report],
    { timeoutMs: 120_000 },
  );
  assert.equal(run.code, 0, run.stderr);
  const again = await runSvc(
    ['bench', 'ingest', '--duration', '1s', '--warmup', '0s', '--connections', '2', '--batch', '50', '-o', 'json'],
    { timeoutMs: 120_000 },
  );
  assert.equal(again.code, 0, again.stderr);
  const r = jsonOut(again);
  assert.deepEqual([r.scenario, r.target], ['ingest', 'scratch']);
  const g = r.ingest;
  assert.equal(g.targetRate, null, 'no --rate: closed loop');
  assert.ok(g.batchesAcked > 0 && g.rejected === 0 && g.errors === 0, JSON.stringify(g));
  assert.equal(g.observations, g.batchesAcked * 50);
  assert.equal(g.ledgerRecords, g.batchesAcked, 'every acked batch names a ledger record of its own');
  assert.ok(g.drainedRate > 0 && g.ackLatencyMs.p50 > 0, JSON.stringify(g));
  assert.deepEqual([r.ledger.acknowledged, r.ledger.complete], [g.batchesAcked, true]);
  assert.ok(r.ledger.headSeqGrowth >= g.batchesAcked, JSON.stringify(r.ledger));
  assert.equal(r.raw[0].target, 'svc-grpc-ingest');
  const md = readFileSync(report, 'utf8');
  assert.match(md, /^# svc bench ingest/);
  assert.match(md, /\| Observations acked durable per second \|/);
});

test('svc bench ingest: bad --batch and --server without --grpc are usage errors', async () => {
  const batch = await runSvc(['bench', 'ingest', '--batch', '0']);
  assert.equal(batch.code, 2, batch.stderr);
  assert.match(batch.stderr, /--batch/);
  const grpc = await runSvc(['bench', 'ingest', '--server', 'https://127.0.0.1:9', '--token', 'x', '-o', 'json']);
  assert.equal(grpc.code, 2, grpc.stderr);
  assert.match(jsonOut(grpc).error.message, /--grpc host:port/);
});
