/**
 * `svc bench plan` (issue 36 item 2): the three example profiles of docs/sizing/ give the answers
 * docs/sizing.md documents, from the reference result files committed beside them.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { jsonOut, REPO_ROOT, runSvc, tempDir } from '../harness.js';

const RESULTS = join(REPO_ROOT, 'docs', 'sizing', 'reference-results');
const profile = (name: string): string => join(REPO_ROOT, 'docs', 'sizing', `${name}.yaml`);
const planOf = async (file: string, results = RESULTS): Promise<any> => {
  const run = await runSvc(['bench', 'plan', '--profile', file, '--results', results, '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  return jsonOut(run);
};

test('team pilot: one node with SQLite, a few GiB for a year', async () => {
  const a = await planOf(profile('team-pilot'));
  assert.equal(a.fits_one_node_sqlite, true);
  assert.equal(a.store, 'sqlite');
  assert.equal(a.nodes, 1);
  assert.ok(a.cpu.utilisation < 0.05, `cpu ${a.cpu.utilisation}`);
  // 20,000 records/day × 375 B (measured) = 7.5 MB/day; × 365 days + 20,000 edges × 695 B.
  assert.equal(a.disk.bytes_per_day, 20_000 * 375);
  assert.equal(a.disk.total_bytes_retention, 20_000 * 375 * 365 + 20_000 * 695);
  assert.equal(a.figures.ledger_bytes_per_record.source, 'ledger-append-20261123-174203.json');
  assert.ok(a.measured.length >= 8 && a.extrapolated.length >= 4);
});

test('5,000-agent enterprise: one node with SQLite, about half the CPU at peak', async () => {
  const a = await planOf(profile('enterprise-5k'));
  assert.equal(a.fits_one_node_sqlite, true);
  assert.equal(a.nodes, 1);
  assert.ok(a.cpu.utilisation > 0.5 && a.cpu.utilisation < 0.6, `cpu ${a.cpu.utilisation}`);
  assert.equal(a.disk.total_bytes_retention, 2_000_000 * 375 * 365 + 1_000_000 * 695);
});

test('50,000-agent enterprise: Postgres with 8 API replicas', async () => {
  const a = await planOf(profile('enterprise-50k'));
  assert.equal(a.fits_one_node_sqlite, false);
  assert.equal(a.store, 'postgres');
  assert.equal(a.nodes, 8);
  assert.ok(a.reasons.some((r: string) => r.includes('1 TiB')), a.reasons.join('\n'));
  assert.ok(a.extrapolated.some((e: string) => e.includes('8 nodes')));
});

test('a figure never measured is indeterminate (exit 8), a bad profile is a usage error (exit 2)', async () => {
  const empty = tempDir('svc-bench-plan-');
  const missing = await runSvc(['bench', 'plan', '--profile', profile('team-pilot'), '--results', empty, '-o', 'json']);
  assert.equal(missing.code, 8, missing.stderr);
  assert.equal(jsonOut(missing).error.code, 'figures_missing');
  const bad = join(empty, 'bad.json');
  writeFileSync(bad, JSON.stringify({ name: 'x', agents: 1 }));
  const usage = await runSvc(['bench', 'plan', '--profile', bad, '--results', RESULTS]);
  assert.equal(usage.code, 2, usage.stderr);
  assert.match(usage.stderr, /lacks collectors/);
});
