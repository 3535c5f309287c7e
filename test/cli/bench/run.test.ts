/**
 * `svc bench http` against a scratch server it starts on this host: exits 0, reports a non-zero
 * rate in `-o json`, writes the Markdown report, and leaves no scratch directory behind.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { jsonOut, runSvc, tempDir } from '../harness.js';

test('svc bench http --duration 2s against a scratch server', async () => {
  const report = join(tempDir('svc-bench-run-'), 'report.md');
  const run = await runSvc(['bench', 'http', '--duration', '2s', '--rate', '200', '--connections', '8', '--report', report, '-o', 'json'], {
    timeoutMs: 60_000,
  });
  assert.equal(run.code, 0, run.stderr);
  const r = jsonOut(run);
  assert.equal(r.scenario, 'http');
  assert.equal(r.target, 'scratch');
  assert.ok(r.load.achievedRate > 0, `rate ${r.load.achievedRate}`);
  assert.ok(r.load.ok > 0 && r.load.errors === 0, JSON.stringify(r.load));
  assert.ok(r.load.latencyMs.p50 > 0);
  const md = readFileSync(report, 'utf8');
  assert.match(md, /^# svc bench http/);
  assert.match(md, /\| from the intended send time \|/);
});

test('usage errors exit 2; --server with a token of a non-bench tenant is refused before any load', async () => {
  const bad = await runSvc(['bench', 'http', '--duration', 'forever']);
  assert.equal(bad.code, 2, bad.stderr);
  const unknown = await runSvc(['bench', 'nope']);
  assert.equal(unknown.code, 2, unknown.stderr);
  const noToken = await runSvc(['bench', 'http', '--server', 'http://127.0.0.1:9']);
  assert.equal(noToken.code, 2, noToken.stderr);
  assert.match(noToken.stderr, /bench tenant/);
});
