/**
 * `svc findings …`, `svc security evaluate` and `svc observability …` the way users run them: the
 * built binary against `svc serve --seed-demo` over HTTPS, parsing `-o json`.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { sarifSchemaErrors } from '../helpers/sarif.js';
import { jsonOut, runSvc } from './harness.js';

let server: TestServer;
let base: string[];
let token: string;

before(async () => {
  server = await startServer({ args: ['--seed-demo'], env: { SERVICE_FINDINGS_EVALUATE_INTERVAL_S: '0' } });
  const caPath = join(tempDir('svc-fnd-cli-'), 'ca.pem');
  writeFileSync(caPath, server.certPem as string);
  const login = await call(server, 'POST', '/v1/auth/login', {
    body: JSON.stringify({ email: 'admin@demo.local', password: 'demo-password-1234' }),
    headers: { 'content-type': 'application/json' },
  });
  token = login.json().token;
  base = ['--server', server.url, '--ca-cert', caPath, '--token', token];
});
after(async () => server?.stop());

describe('svc findings, security and observability against a seeded server', () => {
  let id: string;

  it('security evaluate turns the demo graph into findings; findings ls/get/evidence show them', async () => {
    const run = await runSvc(['security', 'evaluate', ...base, '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(jsonOut(run).reported > 0);
    const page = jsonOut(await runSvc(['findings', 'ls', ...base, '--source', 'detector', '--limit', '5', '-o', 'json']));
    assert.equal(page.items.length, 5);
    id = page.items[0].id;
    const one = jsonOut(await runSvc(['findings', 'get', id, ...base, '-o', 'json']));
    assert.deepEqual([one.id, one.source, one.status], [id, 'detector', 'open']);
    const ev = await runSvc(['findings', 'evidence', id, ...base, '-o', 'json']);
    assert.equal(ev.code, 0, ev.stderr);
    assert.deepEqual([jsonOut(ev).id, jsonOut(ev).rule_id], [id, one.rule_id]);
    assert.equal(typeof jsonOut(ev).evidence, 'object');
    const text = await runSvc(['findings', 'ls', ...base, '--limit', '3']);
    assert.match(text.stdout, /^ID\s+SEVERITY\s+STATUS\s+RULE/m);
    const again = jsonOut(await runSvc(['security', 'evaluate', ...base, '-o', 'json']));
    assert.deepEqual([again.reported, again.resolved], [0, 0], 'an unchanged graph reports nothing new');
    assert.deepEqual(server.logs().filter((l) => /had no audit record/.test(l.msg)), [], 'each evaluation commit had its audit record');
  });

  it('findings triage sets the status (a stale version is exit 5); a bad status is a usage error', async () => {
    const version = String(jsonOut(await runSvc(['findings', 'get', id, ...base, '-o', 'json'])).version);
    const t = await runSvc([
      'findings',
      'triage',
      id,
      ...base,
      '--status',
      'acknowledged',
      '--note',
      'ticket SEC-1',
      '--version',
      version,
      '-o',
      'json',
    ]);
    assert.equal(t.code, 0, t.stderr);
    assert.deepEqual([jsonOut(t).status, jsonOut(t).status_note], ['acknowledged', 'ticket SEC-1']);
    assert.equal((await runSvc(['findings', 'triage', id, ...base, '--status', 'resolved', '--version', version, '-o', 'json'])).code, 5);
    assert.equal((await runSvc(['findings', 'triage', id, ...base, '--status', 'closed'])).code, 2);
  });

  it('findings export writes a schema-valid SARIF file atomically with mode 0600', async () => {
    const dir = tempDir('svc-fnd-out-');
    const out = join(dir, 'findings.sarif');
    const res = await runSvc(['findings', 'export', ...base, '--format', 'sarif', '--source', 'detector', '--out', out, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const summary = jsonOut(res);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['findings.sarif'], 'no temporary file is left');
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(sarifSchemaErrors(doc), []);
    assert.equal(doc.runs[0].results.length, summary.results);
    assert.deepEqual([summary.truncated, summary.refused, summary.bytes], [false, 0, statSync(out).size]);
    assert.equal((await runSvc(['findings', 'export', ...base, '--format', 'csv', '--out', out])).code, 2);
  });

  it(
    'observability: ingestion-health verifies the pinned versions; attestation says a dev build is not proof; traces find a traced ' +
      'request',
    async () => {
      const health = jsonOut(await runSvc(['observability', 'ingestion-health', ...base, '-o', 'json']));
      const byName = Object.fromEntries(health.standards.map((s: { standard: string }) => [s.standard, s]));
      for (const s of ['ocsf', 'asim', 'siem-formats', 'prometheus-text', 'w3c-trace-context'])
        assert.equal(byName[s].status, 'ok', `${s}: ${JSON.stringify(byName[s].check)}`);
      assert.equal(byName['ledger-push'].status, 'not_implemented');
      const att = jsonOut(await runSvc(['observability', 'attestation', ...base, '-o', 'json']));
      assert.deepEqual([att.version, att.release], ['dev', false]);
      assert.match(att.provenance, /not proof of provenance/);
      assert.match(att.lockfile.sha256, /^[0-9a-f]{64}$/);
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const traced = await call(server, 'PATCH', `/v1/m/security/findings/${id}`, {
        body: JSON.stringify({ status: 'open', note: 'traced' }),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      });
      assert.equal(traced.status, 200, traced.text);
      const traces = jsonOut(await runSvc(['observability', 'traces', ...base, '-o', 'json']));
      assert.ok(traces.items.some((t: { trace_id: string }) => t.trace_id === traceId));
      const trace = jsonOut(await runSvc(['observability', 'trace', traceId, ...base, '-o', 'json']));
      assert.deepEqual(
        trace.records.map((r: { action: string }) => r.action),
        ['security.finding.triage'],
      );
      assert.match(trace.records[0].hash, /^[0-9a-f]{64}$/);
      assert.equal((await runSvc(['observability', 'trace', 'ffffffffffffffffffffffffffffffff', ...base, '-o', 'json'])).code, 4);
    },
  );
});
