/**
 * `svc bench --server` against a running `svc serve` started separately: with a superadmin
 * credential it creates a bench tenant of its own, runs the load there with a key bound to it, then
 * revokes the key and deletes the tenant; no other tenant gets a row or a ledger record. Any other
 * credential is refused (exit 2) before any load.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, setupAndLogin, startServer } from '../../helpers/server.js';
import { jsonOut, runSvc } from '../harness.js';

const ADMIN = { email: 'ops@example.com', password: 'correct horse battery staple 1' };

async function keyFor(organization: string): Promise<{ server: Awaited<ReturnType<typeof startServer>>; key: string }> {
  const server = await startServer({ timeoutMs: 30_000 });
  const { token } = await setupAndLogin(server, ADMIN, organization);
  const res = await call(server, 'POST', '/v1/tokens', {
    body: JSON.stringify({ name: 'bench' }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 201, res.text);
  return { server, key: res.json().token as string };
}

test('a key of an ordinary tenant is refused before any load', async () => {
  const { server, key } = await keyFor('Acme');
  try {
    const run = await runSvc([
      'bench',
      'audited-write',
      '--server',
      server.url,
      '--token',
      key,
      '--ca-cert',
      join(server.dataDir, 'tls', 'cert.pem'),
      '--duration',
      '1s',
      '-o',
      'json',
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(jsonOut(run).error.code, 'not_bench_tenant');
  } finally {
    await server.stop();
  }
});

test(
  'a superadmin credential: the load runs in a bench tenant created ' + 'for the run and removed after it; no other tenant is written',
  async () => {
    const server = await startServer({ timeoutMs: 30_000, env: { SERVICE_RATE_LIMIT_RPS: '0' } });
    try {
      const { token, tenant } = await setupAndLogin(server, ADMIN, 'Acme');
      const auth = { authorization: `Bearer ${token}`, 'x-service-tenant': tenant };
      const acmeHead = (await call(server, 'GET', '/v1/audit?limit=1', { headers: auth })).json().head_seq as number;
      const run = await runSvc(
        [
          'bench',
          'audited-write',
          '--server',
          server.url,
          '--token',
          token,
          '--ca-cert',
          join(server.dataDir, 'tls', 'cert.pem'),
          '--duration',
          '1s',
          '--rate',
          '50',
          '--connections',
          '4',
          '-o',
          'json',
        ],
        { timeoutMs: 60_000 },
      );
      assert.equal(run.code, 0, run.stderr);
      const report = jsonOut(run);
      assert.equal(report.target, 'server');
      assert.ok(report.load.ok > 0, JSON.stringify(report.load));
      assert.equal(report.ledger.complete, true, 'every acknowledged write has its ledger record');
      const created = /bench tenant (bench-\S+) \(([0-9a-f-]{36})\) created for the run and removed after it/.exec(report.notes.join('\n'));
      assert.ok(created, report.notes.join('\n'));
      const orgs = (await call(server, 'GET', '/v1/system/orgs?limit=1000', { headers: { authorization: `Bearer ${token}` } })).json()
        .items as Array<{ id: string }>;
      assert.ok(!orgs.some((o) => o.id === created[2]), 'the bench tenant is gone');
      assert.equal((await call(server, 'GET', '/v1/agents', { headers: auth })).json().items.length, 0, 'no agent in the existing tenant');
      const after = (await call(server, 'GET', '/v1/audit?limit=1', { headers: auth })).json().head_seq as number;
      assert.equal(after, acmeHead + 1, "the existing tenant's chain only grew by this test's own audit read");
    } finally {
      await server.stop();
    }
  },
);
