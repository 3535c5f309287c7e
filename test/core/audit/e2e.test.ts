/**
 * The audit ledger end to end through the real `svc serve` (HTTPS, real auth): setup and login are
 * recorded durably (system chain and the new tenant's chain), the audit routes serve and verify
 * them, and `svc audit verify` checks the served chain with the key it pinned from the pubkey route.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, startServer, type TestServer, setupAndLogin } from '../../helpers/server.js';
import { jsonOut, runSvc } from '../../cli/harness.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

describe('audit ledger through svc serve', () => {
  let server: TestServer;
  let token: string;
  let tenant: string;
  const auth = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'x-service-tenant': tenant, ...extra });

  before(async () => {
    server = await startServer({ env: { SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0' } });
    ({ tenant, token } = await setupAndLogin(server, ADMIN));
  });
  after(async () => {
    await server?.stop();
  });

  test('the tenant chain starts with org.create; each read appends audit.read; verify is ok', async () => {
    const page = await call(server, 'GET', '/v1/audit?limit=100', { headers: auth() });
    assert.equal(page.status, 200, page.text);
    const items = page.json().items as Array<{ seq: number; action: string; tenant: string }>;
    assert.equal(items[0]?.seq, 1);
    assert.equal(items[0]?.action, 'org.create');
    assert.ok(items.every((r) => r.tenant === tenant));
    const again = await call(server, 'GET', `/v1/audit?from=${page.json().head_seq + 1}`, { headers: auth() });
    assert.equal(again.json().items[0]?.action, 'audit.read');
    const v = await call(server, 'GET', '/v1/audit/verify', { headers: auth() });
    assert.equal(v.status, 200, v.text);
    assert.equal(v.json().ok, true, v.text);
    assert.equal(v.json().signatures.checked, v.json().chain.checked);
  });

  test('the system chain holds setup and login; it needs a credential', async () => {
    const sys = await call(server, 'GET', '/v1/audit/system?limit=100', { headers: auth() });
    assert.equal(sys.status, 200, sys.text);
    const actions = (sys.json().items as Array<{ action: string }>).map((r) => r.action);
    assert.ok(actions.includes('auth.login'), actions.join(','));
    const anon = await call(server, 'GET', '/v1/audit/system');
    assert.equal(anon.status, 401);
  });

  test('on-demand checkpoints, then svc audit verify with the pinned key, live and from a file', async () => {
    const cpRun = await runSvc([
      'audit',
      'checkpoint',
      '--server',
      server.url,
      '--pin-sha256',
      server.pinSha256 as string,
      '--token',
      token,
      '-o',
      'json',
    ]);
    assert.equal(cpRun.code, 0, cpRun.stderr);
    const cps = jsonOut(cpRun).checkpoints as Array<{ tenant: string }>;
    assert.ok(cps.some((c) => c.tenant === tenant));
    const keys = await call(server, 'GET', '/v1/audit/pubkey', { headers: auth() });
    assert.equal(keys.status, 200, keys.text);
    const key = keys.json().keys[0] as { algorithm: string; public_key: string };
    // `svc keys ls` serves the same keys, with the form --pubkey takes.
    const ls = await runSvc([
      'keys',
      'ls',
      '--server',
      server.url,
      '--pin-sha256',
      server.pinSha256 as string,
      '--token',
      token,
      '--tenant',
      tenant,
      '-o',
      'json',
    ]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.deepEqual(jsonOut(ls), keys.json());
    const text = await runSvc([
      'keys',
      'ls',
      '--server',
      server.url,
      '--pin-sha256',
      server.pinSha256 as string,
      '--token',
      token,
      '--tenant',
      tenant,
    ]);
    assert.match(text.stdout, new RegExp(`--pubkey ${key.algorithm}:${key.public_key.replace(/[+/]/g, '\\$&')}`));
    const common = [
      '--server',
      server.url,
      '--pin-sha256',
      server.pinSha256 as string,
      '--token',
      token,
      '--tenant',
      tenant,
      '--pubkey',
      `${key.algorithm}:${key.public_key}`,
      '--strict',
      '-o',
      'json',
    ];
    const live = await runSvc(['audit', 'verify', ...common]);
    assert.equal(live.code, 0, live.stderr);
    const report = jsonOut(live);
    assert.equal(report.ok, true);
    assert.equal(report.checkpoints.status, 'ok');
    // The same records as a file, one served record per line, with one field changed.
    const page = await call(server, 'GET', '/v1/audit?limit=1000', { headers: auth() });
    const records = page.json().items as Array<Record<string, unknown>>;
    const file = join(server.dataDir, 'served.ndjson');
    writeFileSync(file, records.map((r, i) => JSON.stringify(i === 1 ? { ...r, actor: 'user:mallory' } : r)).join('\n'));
    const tampered = await runSvc([
      'audit',
      'verify',
      '--file',
      file,
      '--pubkey',
      `${key.algorithm}:${key.public_key}`,
      '--strict',
      '-o',
      'json',
    ]);
    assert.equal(tampered.code, 7);
    assert.deepEqual([jsonOut(tampered).chain.reason, jsonOut(tampered).chain.break_at], ['hash-mismatch', 2]);
    // What a SIEM receives: `svc audit export` in each family, verified offline with the same pinned key.
    for (const format of ['cef', 'ocsf']) {
      const out = join(server.dataDir, `export.${format}`);
      const exp = await runSvc([
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
        '--format',
        format,
        '--out',
        out,
      ]);
      assert.equal(exp.code, 0, exp.stderr);
      const offline = await runSvc([
        'audit',
        'verify',
        '--file',
        out,
        '--pubkey',
        `${key.algorithm}:${key.public_key}`,
        '--strict',
        '-o',
        'json',
      ]);
      assert.equal(offline.code, 0, offline.stderr);
      const r = jsonOut(offline);
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.checkpoints.status, 'ok', 'the on-demand checkpoint verifies from the export too');
      assert.ok(r.chain.checked >= records.length, `${r.chain.checked} records verified from the ${format} export`);
    }
  });
});
