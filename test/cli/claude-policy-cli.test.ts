/**
 * `svc claude-policy` and `svc capabilities configs` end to end against the real server: validate
 * and dry-run exit 7 on errors, publish needs -y, artifact writes the bytes, raw signature and key
 * that Debian's openssl verifies, checkin exits 0 for the published bytes and 7 for a flipped byte
 * (openssl refuses it too) or a stale revision; configs create/get/replace/rm/revisions with names
 * where ids are, -y for replace and rm, replace resetting what it does not give.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jsonOut, runSvc, tempDir } from './harness.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

describe('svc claude-policy / capabilities configs', () => {
  let server: TestServer;
  let owner: string;
  let tenant: string;
  const dir = tempDir('svc-cp-cli-');
  const f = (n: string) => path.join(dir, n);
  const svc = (args: string[]) =>
    runSvc([...args, '--server', server.url, '--pin-sha256', server.pinSha256 as string, '--tenant', tenant], {
      env: { SERVICE_TOKEN: owner },
    });

  before(async () => {
    server = await startServer({ env: { SERVICE_RATE_LIMIT_RPS: '0' }, timeoutMs: 120_000 });
    const token = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout())?.[1] as string;
    const json = { 'content-type': 'application/json' };
    const setup = await call(server, 'POST', '/v1/setup', {
      body: JSON.stringify({ token, email: 'o@example.test', password: 'owner password 123', organization: 'Acme' }),
      headers: json,
    });
    tenant = setup.json().organization.id;
    owner = (
      await call(server, 'POST', '/v1/auth/login', {
        body: JSON.stringify({ email: 'o@example.test', password: 'owner password 123' }),
        headers: json,
      })
    ).json().token;
    const put = await call(server, 'PUT', '/v1/console/secrets', {
      headers: { ...json, authorization: `Bearer ${owner}` },
      body: JSON.stringify({ name: 'gh-mcp', value: 'ghp_notprintedanywhere000000000000' }),
    });
    assert.equal(put.status, 200, put.text);
  });
  after(async () => server?.stop());

  it(
    'claude-policy: validate/dry-run exit 7 on errors; publish -y; artifact verified by openssl; checkin exit 0, then 7 for a flipped ' +
      'byte and for a stale revision',
    async () => {
      writeFileSync(f('bad.json'), JSON.stringify({ env: { ANTHROPIC_API_KEY: 'sk-ant-api03-literalliteralliteral' } }));
      writeFileSync(f('good.json'), JSON.stringify({ permissions: { deny: ['Bash(curl:*)'] } }));
      const bad = await svc(['claude-policy', 'validate', f('bad.json'), '-o', 'json']);
      assert.equal(bad.code, 7, bad.stderr);
      assert.equal(jsonOut(bad).credentials[0].path, 'env.ANTHROPIC_API_KEY');
      assert.equal((await svc(['claude-policy', 'dry-run', f('bad.json')])).code, 7);
      assert.equal((await svc(['claude-policy', 'validate', f('good.json')])).code, 0);
      assert.equal((await svc(['claude-policy', 'publish', f('bad.json'), '-y'])).code, 1, 'publish refuses inline credentials (400)');
      assert.equal((await svc(['claude-policy', 'publish', f('good.json')])).code, 2, 'replacing needs -y when not interactive');
      const p1 = await svc(['claude-policy', 'publish', f('good.json'), '--note', 'first', '-y', '-o', 'json']);
      assert.equal(jsonOut(p1).revision, 1, p1.stderr);

      const inst = (n: string) => f(`host-${n}`);
      const art = await svc([
        'claude-policy',
        'artifact',
        '--out',
        inst('managed-settings.json'),
        '--sig-out',
        inst('sig'),
        '--key-out',
        inst('key.pem'),
        '-o',
        'json',
      ]);
      assert.equal(art.code, 0, art.stderr);
      const verify = () =>
        execFileSync(
          'openssl',
          [
            'pkeyutl',
            '-verify',
            '-pubin',
            '-inkey',
            inst('key.pem'),
            '-rawin',
            '-in',
            inst('managed-settings.json'),
            '-sigfile',
            inst('sig'),
          ],
          { stdio: 'pipe' },
        ).toString();
      assert.match(verify(), /Signature Verified Successfully/);
      const raw = await svc(['claude-policy', 'artifact', '--out', '-']);
      assert.equal(raw.stdout, readFileSync(inst('managed-settings.json'), 'utf8'));
      const ok = await svc([
        'claude-policy',
        'checkin',
        '--file',
        inst('managed-settings.json'),
        '--sig',
        inst('sig'),
        '--host',
        'ws-1',
        '-o',
        'json',
      ]);
      assert.equal(ok.code, 0, ok.stderr + ok.stdout);
      assert.deepEqual([jsonOut(ok).verified, jsonOut(ok).current], [true, true]);

      const bytes = readFileSync(inst('managed-settings.json'));
      bytes[5] = bytes[5]! ^ 0x20;
      writeFileSync(inst('managed-settings.json'), bytes);
      assert.throws(verify);
      const flipped = await svc(['claude-policy', 'checkin', '--file', inst('managed-settings.json'), '--host', 'ws-1', '-o', 'json']);
      assert.equal(flipped.code, 7, flipped.stderr);
      assert.equal(jsonOut(flipped).verified, false);

      writeFileSync(f('good2.json'), JSON.stringify({ permissions: { deny: ['Bash(curl:*)', 'Bash(wget:*)'] } }));
      assert.equal((await svc(['claude-policy', 'publish', f('good2.json'), '-y'])).code, 0);
      await svc(['claude-policy', 'artifact', '--revision', '1', '--out', inst('managed-settings.json')]);
      const stale = await svc(['claude-policy', 'checkin', '--file', inst('managed-settings.json'), '--host', 'ws-1', '-o', 'json']);
      assert.equal(stale.code, 7, 'a verified but stale revision is not current');
      assert.deepEqual([jsonOut(stale).verified, jsonOut(stale).revision, jsonOut(stale).published_revision], [true, 1, 2]);
      const versions = jsonOut(await svc(['claude-policy', 'versions', '-o', 'json'])).items as Array<{
        revision: number;
        active: boolean;
      }>;
      assert.deepEqual(
        versions.map((v) => [v.revision, v.active]),
        [
          [2, true],
          [1, false],
        ],
      );
      const dist = jsonOut(await svc(['claude-policy', 'distribution', '-o', 'json']));
      assert.deepEqual(dist.summary, { hosts: 1, current: 0, stale: 1, unverified: 0 });
    },
  );

  it(
    'capabilities configs: create, get by name, check (exit 6 once its secret is gone), replace -y resets what it leaves out, ' +
      'revisions, rm -y',
    async () => {
      const created = await svc([
        'capabilities',
        'configs',
        'create',
        '--name',
        'github',
        '--kind',
        'mcp_server',
        '--transport',
        'http',
        '--url',
        'https://mcp.example/gh',
        '--header',
        'Authorization=secret:gh-mcp',
        '--allowed-tool',
        'search',
        '--timeout-ms',
        '5000',
        '-o',
        'json',
      ]);
      assert.equal(created.code, 0, created.stderr);
      assert.deepEqual(jsonOut(created).secret_refs, ['gh-mcp']);
      const inline = await svc([
        'capabilities',
        'configs',
        'create',
        '--name',
        'leaky',
        '--kind',
        'mcp_server',
        '--command',
        'srv',
        '--env',
        'GITHUB_TOKEN=literal-token-1',
        '-o',
        'json',
      ]);
      assert.equal(inline.code, 1);
      assert.ok(!inline.stdout.includes('literal-token-1') && !inline.stderr.includes('literal-token-1'));
      const got = jsonOut(await svc(['capabilities', 'configs', 'get', 'github', '-o', 'json']));
      assert.deepEqual([got.timeout_ms, got.allowed_tools], [5000, ['search']]);
      assert.equal((await svc(['capabilities', 'configs', 'get', 'nope'])).code, 4);
      const checked = await svc(['capabilities', 'configs', 'check', 'github', '-o', 'json']);
      assert.equal(checked.code, 0, checked.stderr);
      assert.deepEqual([jsonOut(checked).ok, jsonOut(checked).secrets], [true, ['gh-mcp']]);
      assert.ok(!checked.stdout.includes('ghp_'), 'the check never shows a value');
      assert.equal((await svc(['secrets', 'rm', 'gh-mcp', '-y'])).code, 0);
      assert.equal(
        (await svc(['capabilities', 'configs', 'check', 'github'])).code,
        6,
        'a referenced secret that is gone fails closed (503)',
      );
      writeFileSync(
        f('gh.json'),
        JSON.stringify({ name: 'github', kind: 'mcp_server', transport: 'http', url: 'https://mcp.example/gh2' }),
      );
      assert.equal(
        (await svc(['capabilities', 'configs', 'replace', 'github', '--file', f('gh.json')])).code,
        2,
        'replace needs -y when not interactive',
      );
      const rep = jsonOut(await svc(['capabilities', 'configs', 'replace', 'github', '--file', f('gh.json'), '-y', '-o', 'json']));
      assert.deepEqual(
        [rep.revision, rep.url, rep.timeout_ms, rep.allowed_tools, rep.headers],
        [2, 'https://mcp.example/gh2', 30000, [], {}],
      );
      const revs = jsonOut(await svc(['capabilities', 'configs', 'revisions', 'github', '-o', 'json'])).items as Array<{
        revision: number;
        change: string;
      }>;
      assert.deepEqual(
        revs.map((r) => [r.revision, r.change]),
        [
          [2, 'replace'],
          [1, 'create'],
        ],
      );
      assert.equal(jsonOut(await svc(['capabilities', 'configs', 'ls', '-o', 'json'])).items.length, 1);
      assert.equal((await svc(['capabilities', 'configs', 'rm', 'github'])).code, 2);
      assert.equal((await svc(['capabilities', 'configs', 'rm', 'github', '-y'])).code, 0);
      assert.equal(jsonOut(await svc(['capabilities', 'configs', 'ls', '-o', 'json'])).items.length, 0);
    },
  );
});
