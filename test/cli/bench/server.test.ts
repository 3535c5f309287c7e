/**
 * `svc bench --server`: against a running `svc serve` started separately, the token must belong to
 * a dedicated bench tenant. A key of an ordinary tenant is refused (exit 2) before any load.
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
