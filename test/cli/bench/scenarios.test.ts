/**
 * `svc bench pep|verify|export` against a scratch server it starts on this host: each runs and
 * answers 2xx only; pep's every 2xx decision has its ledger record (the head grew by at least the
 * acknowledged decisions). `--server` is covered by server.test.ts's refusal (see docs/sizing.md,
 * the bench-tenant check's known gap).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonOut, runSvc } from '../harness.js';

for (const scenario of ['pep', 'verify', 'export']) {
  test(`svc bench ${scenario} against a scratch server`, async () => {
    const run = await runSvc(['bench', scenario, '--duration', '1s', '--rate', '20', '--connections', '4', '-o', 'json'], {
      timeoutMs: 180_000,
    });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const r = jsonOut(run);
    assert.deepEqual([r.scenario, r.target], [scenario, 'scratch']);
    assert.ok(r.load.ok > 0 && r.load.non2xx === 0 && r.load.errors === 0, JSON.stringify(r.load));
    if (scenario === 'pep') assert.deepEqual([r.ledger.complete, r.ledger.acknowledged], [true, r.load.ok]);
  });
}
