/**
 * `svc secrets`, `svc config effective` and `svc support` against a real server, run as a user runs
 * them: the secret value from stdin or a file (never a flag), `svc sso` against a real OpenID
 * provider, JSON output, exit codes (8 for an
 * unknown update status, 3 for a bundle without AAL3), and a bundle file written 0600.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { setupAndLogin, startServer, call, type TestServer } from '../helpers/server.js';
import { jsonOut, runSvc, tempDir } from './harness.js';
import { startProvider } from '../helpers/oidc-provider.js';
import { formatTimestamp, nowEpochNs } from '../../src/ledger/time.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };
let server: TestServer;
let dir: string;
let session: string;
let tenant: string;
const svc = (args: string[], opts: { stdin?: string; token?: string } = {}) =>
  runSvc([...args, '--server', server.url, '--pin-sha256', String(server.pinSha256)], {
    env: { SERVICE_TOKEN: opts.token ?? session },
    stdin: opts.stdin,
  });

before(async () => {
  server = await startServer();
  dir = tempDir('svc-console-cli-');
  ({ token: session, tenant } = await setupAndLogin(server, ADMIN));
});
after(async () => {
  await server?.stop();
});

test('svc secrets set (stdin and file) / ls / rm; the value is never printed and has no flag', async () => {
  const set = await svc(['secrets', 'set', 'hec-token', '-o', 'json'], { stdin: 'hec-value-from-stdin-1234\n' });
  assert.equal(set.code, 0, set.stderr);
  assert.deepEqual([jsonOut(set).name, jsonOut(set).hint], ['hec-token', '1234']);
  writeFileSync(join(dir, 'v.txt'), 'file-value-abcd9876', { mode: 0o600 });
  assert.equal((await svc(['secrets', 'set', 'other', '--value-file', join(dir, 'v.txt')])).code, 0);
  const flag = await svc(['secrets', 'set', 'x', '--value', 'oops']);
  assert.equal(flag.code, 2, 'there is no --value flag');
  const ls = await svc(['secrets', 'ls', '-o', 'json']);
  assert.equal(ls.code, 0, ls.stderr);
  assert.deepEqual(jsonOut(ls).items.map((i: { name: string }) => i.name), ['hec-token', 'other']);
  assert.ok(!ls.stdout.includes('hec-value-from-stdin') && !ls.stdout.includes('file-value'));
  const text = await svc(['secrets', 'ls']);
  assert.match(text.stdout, /hec-token\s+…1234/);
  assert.equal((await svc(['secrets', 'rm', 'other', '-y'])).code, 0);
  assert.equal((await svc(['secrets', 'rm', 'other', '-y'])).code, 4, 'a missing secret is exit 4');
});

test('svc config effective -o json lists sources; text output one setting a line', async () => {
  const run = await svc(['config', 'effective', '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  const dataDir = jsonOut(run).settings.find((s: { name: string }) => s.name === 'data_dir');
  assert.deepEqual([dataDir.source, dataDir.value], ['flag', server.dataDir]);
  assert.match((await svc(['config', 'effective'])).stdout, /^data_dir\s+flag\s+\//m);
});

test('svc support update-check exits 8 without a manifest URL; support status and license', async () => {
  const run = await svc(['support', 'update-check']);
  assert.equal(run.code, 8, run.stdout + run.stderr);
  assert.match(run.stdout, /unknown/);
  const status = await svc(['support', 'status', '-o', 'json']);
  assert.equal(status.code, 0, status.stderr);
  assert.equal(jsonOut(status).setup.steps.find((s: { id: string }) => s.id === 'first_admin').completed, true);
  const lic = await svc(['support', 'license']);
  assert.equal(lic.code, 0);
  assert.match(lic.stdout, /no license installed/);
  writeFileSync(join(dir, 'bad.license'), JSON.stringify({ license: { license_id: 'x' }, signature: 'AAAA' }));
  assert.equal(
    (await svc(['support', 'license', '--install', join(dir, 'bad.license')])).code,
    1,
    'a license that does not verify is refused (400)',
  );
});

test('svc support bundle: exit 3 without AAL3; with it a 0600 .tar.gz that tar lists', async () => {
  const out = join(dir, 'bundle.tar.gz');
  const denied = await svc(['support', 'bundle', '--out', out]);
  assert.equal(denied.code, 3, denied.stderr);
  assert.throws(() => statSync(out), 'nothing written when refused');
  const login = (
    await call(server, 'POST', '/v1/auth/login', { body: JSON.stringify(ADMIN), headers: { 'content-type': 'application/json' } })
  ).json();
  const db = new Database(join(server.dataDir, 'svc.db'));
  db.pragma('busy_timeout = 5000');
  db.prepare("update sessions set aal = 3, aal_expires_at = ?, amr = 'pwd,hwk' where id = ?").run(
    formatTimestamp(nowEpochNs() + 600n * 1_000_000_000n),
    login.session_id,
  );
  db.close();
  const run = await svc(['support', 'bundle', '--out', out, '-o', 'json'], { token: login.token });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(statSync(out).mode & 0o777, 0o600);
  assert.equal(jsonOut(run).bytes, statSync(out).size);
  const listing = execFileSync('tar', ['-tzf', out], { encoding: 'utf8' });
  for (const f of ['svc-support/version.json', 'svc-support/config-effective.json', 'svc-support/ledger.json', 'svc-support/manifest.json'])
    assert.ok(listing.includes(f), f);
});

test('svc sso set (flags, then a YAML file) / get / test (exit 7 once the provider is gone) / rm -y', async () => {
  const idp = await startProvider();
  try {
    assert.match((await svc(['sso', 'get'])).stdout, /not configured/);
    assert.equal((await svc(['secrets', 'set', 'idp-client'], { stdin: `${idp.clientSecret}\n` })).code, 0);
    const flags = ['--issuer', idp.issuer, '--client-id', idp.clientId, '--client-secret-ref', 'secret:idp-client'];
    assert.equal((await svc(['sso', 'set', ...flags])).code, 2, 'replacing needs -y when not interactive');
    const missing = await svc([
      'sso',
      'set',
      '--issuer',
      idp.issuer,
      '--client-id',
      idp.clientId,
      '--client-secret-ref',
      'secret:nope',
      '-y',
    ]);
    assert.equal(missing.code, 1, 'a reference to a secret that does not exist is refused');
    assert.match(missing.stderr, /no secret named nope/);
    assert.equal((await svc(['sso', 'set', ...flags, '--allowed-domain', 'example.test', '-y'])).code, 0);
    writeFileSync(
      join(dir, 'sso.yaml'),
      `issuer: ${idp.issuer}\nclient_id: ${idp.clientId}\nclient_secret_ref: secret:idp-client\nrole_mapping:\n  - { claim: groups, ` +
        `value: sec-team, tenant: ${tenant}, role: viewer }\n`,
    );
    const fromFile = await svc(['sso', 'set', '--file', join(dir, 'sso.yaml'), '--allowed-domain', 'example.test', '-y', '-o', 'json']);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    const got = jsonOut(await svc(['sso', 'get', '-o', 'json']));
    assert.deepEqual(
      [got.settings.role_mapping.length, got.settings.allowed_domains, got.settings.client_secret_ref],
      [1, ['example.test'], 'secret:idp-client'],
    );
    assert.match((await svc(['sso', 'get'])).stdout, /groups\s+sec-team/);
    const ok = await svc(['sso', 'test', '-o', 'json']);
    assert.equal(ok.code, 0, ok.stdout);
    assert.ok(jsonOut(ok).steps.every((x: { ok: boolean }) => x.ok));
    await idp.stop();
    const down = await svc(['sso', 'test']);
    assert.equal(down.code, 7, 'a failing step exits 7');
    assert.match(down.stdout, /discovery\s+NO/);
    assert.equal((await svc(['sso', 'rm'])).code, 2);
    assert.equal((await svc(['sso', 'rm', '-y'])).code, 0);
    assert.equal((await svc(['sso', 'rm', '-y'])).code, 4, 'nothing left to remove');
  } finally {
    await idp.stop().catch(() => undefined);
  }
});
