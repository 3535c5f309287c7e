/**
 * `svc bench ledger-append`: the append pipeline in the CLI's own process, on both stores. Every
 * acknowledged append is a record of the chain (count and head seq), and the bytes per record are
 * measured; `--server` is refused (exit 2) because there is nothing of a deployment to measure.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonOut, runSvc } from '../harness.js';

const PG = process.env['SVC_TEST_PG_DSN'];

for (const store of ['sqlite', 'postgres'] as const) {
  test(`svc bench ledger-append --store ${store}`, { skip: store === 'postgres' && !PG ? 'SVC_TEST_PG_DSN unset' : false }, async () => {
    const args = ['bench', 'ledger-append', '--duration', '2s', '--warmup', '0s', '--store', store, '-o', 'json'];
    const run = await runSvc(store === 'postgres' ? [...args, '--dsn', PG as string] : args, { timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr);
    const r = jsonOut(run);
    assert.deepEqual([r.scenario, r.target], ['ledger-append', 'in-process']);
    const a = r.ledgerAppend;
    assert.equal(a.store, store);
    assert.ok(a.appends > 0 && a.appendsPerSec > 0 && a.latencyMs.p50 > 0, JSON.stringify(a));
    assert.ok(a.chain.acknowledged >= a.appends);
    assert.deepEqual([a.chain.records, a.chain.headSeq, a.chain.complete], [a.chain.acknowledged, a.chain.acknowledged, true]);
    assert.ok(a.bytesPerRecord > 100 && a.bytesPerRecord < 4000, `bytes per record ${a.bytesPerRecord}`);
    assert.equal(r.raw[0].target, `svc-ledger-${store}`);
    if (store === 'sqlite') assert.equal(r.subject.sqlite_bytes_per_record, a.bytesPerRecord);
  });
}

test('svc bench ledger-append refuses --server, and --store postgres needs --dsn', async () => {
  const remote = await runSvc(['bench', 'ledger-append', '--server', 'https://svc.example:8443', '-o', 'json']);
  assert.equal(remote.code, 2, remote.stderr);
  assert.match(jsonOut(remote).error.message, /no --server form: it measures the ledger append pipeline in this process/);
  const noDsn = await runSvc(['bench', 'ledger-append', '--store', 'postgres']);
  assert.equal(noDsn.code, 2, noDsn.stderr);
  assert.match(noDsn.stderr, /--dsn/);
});
