/**
 * The export end to end through the real `svc serve` (HTTPS, real setup and login, durable ledger)
 * and the real `svc` client: the exported lines are the served chain, and the export is recorded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, startServer, type TestServer, setupAndLogin } from '../../helpers/server.js';
import { jsonOut, runSvc } from '../../cli/harness.js';

const ADMIN = { email: 'export@example.test', password: 'correct horse battery staple' };

describe('audit export through svc serve', () => {
  let server: TestServer;
  let token: string;
  let tenant: string;
  const auth = () => ({ authorization: `Bearer ${token}`, 'x-service-tenant': tenant });

  before(async () => {
    server = await startServer();
    ({ tenant, token } = await setupAndLogin(server, ADMIN));
  });

  after(async () => {
    await server?.stop();
  });

  test('svc audit export writes the chain as CEF; each line carries the served seq and hash; the export is on the chain', async () => {
    const out = join(server.dataDir, 'audit.cef');
    const run = await runSvc([
      'audit',
      'export',
      '--server',
      server.url,
      '--pin-sha256',
      server.pinSha256 as string,
      '--token',
      token,
      '--tenant',
      tenant,
      '--out',
      out,
      '-o',
      'json',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const summary = jsonOut(run) as { count: number; last_seq: number };
    assert.ok(summary.count >= 1);
    assert.equal(summary.last_seq, summary.count);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    assert.equal(lines.pop(), `# export-complete count=${summary.count} last_seq=${summary.last_seq}`);
    const exported = lines.map((l) => ({ seq: Number(/olvSeq=(\d+)/.exec(l)?.[1]), hash: /olvHash=([0-9a-f]{64})/.exec(l)?.[1] }));
    const page = await call(server, 'GET', '/v1/audit?limit=1000', { headers: auth() });
    assert.equal(page.status, 200, page.text);
    const items = page.json().items as Array<{ seq: number; hash: string; action: string; actor: string; meta: string | null }>;
    assert.deepEqual(exported, items.slice(0, summary.count).map((r) => ({ seq: r.seq, hash: r.hash })));
    // DECISIONS.md: then an audit.export record is appended (after the exported prefix).
    const rec = items[summary.last_seq];
    assert.equal(rec?.action, 'audit.export');
    assert.match(rec?.actor ?? '', /^user:/);
    const meta = JSON.parse(rec?.meta ?? '{}') as { complete: boolean; count: number; format: string };
    assert.deepEqual([meta.complete, meta.count, meta.format], [true, summary.count, 'cef']);
  });

  test('without a credential the export is 401; a JSON-format export ends with the export_complete object', async () => {
    const anon = await call(server, 'GET', '/v1/audit/export');
    assert.equal(anon.status, 401);
    const res = await call(server, 'GET', '/v1/audit/export?format=otlp_log_record', { headers: auth() });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['content-type'], 'application/x-ndjson');
    const lines = res.text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const last = lines.pop() as { export_complete: boolean; count: number };
    assert.equal(last.export_complete, true);
    assert.equal(last.count, lines.length);
  });
});
