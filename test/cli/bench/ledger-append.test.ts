/**
 * `svc bench ledger-append`: the append pipeline in the CLI's own process, on both stores. Every
 * acknowledged append is a record of the chain (count and head seq), and the bytes per record are
 * measured; `--server` is refused (exit 2) because there is nothing of a deployment to measure.
 * `svc bench eventing` and `svc bench forward`, in-process too, at small sizes: deliveries and
 * records counted by their receivers, with the baseline ratio; `--server` refused alike.
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

test('svc bench eventing: deliveries through the engine, with the bare-client ratio', async () => {
  const args = ['bench', 'eventing', '--duration', '1s', '--events', '10', '--backlog', '1000', '-o', 'json'];
  const run = await runSvc(args, { timeoutMs: 120_000 });
  assert.equal(run.code, 0, run.stderr);
  const r = jsonOut(run);
  assert.deepEqual([r.scenario, r.target], ['eventing', 'in-process']);
  const e = r.eventing;
  assert.equal(e.subscriptions, 100);
  for (const x of [...e.svc, ...e.bare]) assert.equal(x.n, 1000, JSON.stringify(x));
  assert.ok(e.svcRate > 0 && e.bareRate > 0 && e.ratio > 0, JSON.stringify(e));
  assert.ok(e.paced.n > 0 && e.paced.p50 >= 0, JSON.stringify(e.paced));
  assert.deepEqual([e.backlog.total, e.backlog.delivered], [1000, 1000]);
  assert.equal(r.raw[0].target, 'svc-delivery-engine');
});

test('svc bench forward: records through the syslog connector to the TLS receiver, with the bare tls.connect ratio', async () => {
  const run = await runSvc(['bench', 'forward', '--duration', '1s', '--warmup', '0s', '--records', '3000', '-o', 'json'], {
    timeoutMs: 120_000,
  });
  assert.equal(run.code, 0, run.stderr);
  const r = jsonOut(run);
  assert.deepEqual([r.scenario, r.target], ['forward', 'in-process']);
  const f = r.forward;
  assert.ok(f.rounds >= 1 && f.forwardPerSec > 0 && f.barePerSec > 0 && f.ratio > 0, JSON.stringify(f));
  assert.equal(f.sent, 3000 * 2 * f.rounds);
  assert.equal(f.received, f.sent);
  assert.equal(r.raw[0].target, 'forward-syslog-tls');
});

test('svc bench eventing and forward refuse --server', async () => {
  for (const scenario of ['eventing', 'forward']) {
    const remote = await runSvc(['bench', scenario, '--server', 'https://x', '-o', 'json']);
    assert.equal(remote.code, 2, remote.stderr);
    assert.match(jsonOut(remote).error.message, new RegExp(`^${scenario} has no --server form`));
  }
});
