/**
 * Issue 30 item 12: `svc auth login --name demo` against a second server saves the tenant that
 * login answered with (not the current context's), and the kubectl-named context commands
 * `svc config get-contexts|use-context|current-context|delete-context` manage the saved file.
 * Two real servers, each bootstrapped by the CLI.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../../../helpers/server.js';
import { jsonOut, runSvc, tempDir } from '../../harness.js';

const PASSWORD = 'a long enough passphrase';

describe('saved contexts across two servers', () => {
  let first: TestServer;
  let second: TestServer;
  before(async () => {
    first = await startServer();
    second = await startServer();
  });
  after(async () => {
    await first?.stop();
    await second?.stop();
  });

  it('login saves the tenant it answered with; config commands list, switch, show and delete contexts', { timeout: 120_000 }, async () => {
    const env = { SERVICE_CONFIG: join(tempDir('svc-ctx-'), 'config.yaml') };
    const svc = (args: string[]) => runSvc(args, { env });
    const trust = (s: TestServer) => ['--server', s.url, '--pin-sha256', String(s.pinSha256)];
    const setup = (s: TestServer) => /svcst_[A-Z2-7]+/.exec(s.stdout())?.[0] as string;

    const a = await svc([
      'auth',
      'bootstrap',
      ...trust(first),
      '--setup-token',
      setup(first),
      '--email',
      'a@example.test',
      '--password',
      PASSWORD,
      '--save-context=first',
      '-o',
      'json',
    ]);
    assert.equal(a.code, 0, a.stderr);
    const tenantA = jsonOut(a).organization.id as string;
    const b = await svc([
      'auth',
      'bootstrap',
      ...trust(second),
      '--setup-token',
      setup(second),
      '--email',
      'b@example.test',
      '--password',
      PASSWORD,
      '--organization',
      'Beta',
      '-o',
      'json',
    ]);
    assert.equal(b.code, 0, b.stderr);
    const tenantB = jsonOut(b).organization.id as string;

    // Current context is "first" (tenant A); log in to the second server as "demo".
    const login = await svc([
      'auth',
      'login',
      ...trust(second),
      '--email',
      'b@example.test',
      '--password',
      PASSWORD,
      '--name',
      'demo',
      '-o',
      'json',
    ]);
    assert.equal(login.code, 0, login.stderr);
    assert.equal(jsonOut(login).tenant, tenantB);
    assert.ok(readFileSync(env.SERVICE_CONFIG, 'utf8').includes(tenantB));
    const agents = await svc(['agent', 'ls', '-o', 'json']);
    assert.equal(agents.code, 0, `a command in the new context works: ${agents.stderr}`);

    const listed = await svc(['config', 'get-contexts', '-o', 'json']);
    assert.equal(listed.code, 0, listed.stderr);
    const doc = jsonOut(listed);
    assert.equal(doc.current, 'demo');
    assert.deepEqual(
      doc.items.map((c: { name: string; tenant: string; current: boolean }) => [c.name, c.tenant, c.current]),
      [
        ['demo', tenantB, true],
        ['first', tenantA, false],
      ],
    );
    assert.ok(!listed.stdout.includes('svcs_'), 'tokens are never printed');
    const table = await svc(['config', 'get-contexts']);
    assert.match(table.stdout, /^CURRENT\s+NAME\s+SERVER\s+TENANT/m);
    assert.match(table.stdout, /^\*\s+demo\s+https:\/\/127\.0\.0\.1:/m);

    assert.equal((await svc(['config', 'current-context'])).stdout, 'demo\n');
    const use = await svc(['config', 'use-context', 'first']);
    assert.equal(use.code, 0, use.stderr);
    assert.equal((await svc(['config', 'current-context'])).stdout, 'first\n');
    assert.equal(jsonOut(await svc(['auth', 'whoami', '-o', 'json'])).grants[0].tenant, tenantA);
    assert.equal((await svc(['config', 'use-context', 'nope'])).code, 2, 'an unknown context is a usage error');

    assert.equal((await svc(['config', 'delete-context', 'demo'])).code, 2, 'destructive: -y without a terminal');
    const del = await svc(['config', 'delete-context', 'demo', '-y', '-o', 'json']);
    assert.equal(del.code, 0, del.stderr);
    assert.deepEqual(jsonOut(await svc(['config', 'get-contexts', '-o', 'json'])).items.map((c: { name: string }) => c.name), ['first']);
    assert.equal((await svc(['config', 'delete-context', 'demo', '-y'])).code, 2);
    assert.equal((await svc(['config', 'delete-context', 'first', '-y'])).code, 0);
    const none = await svc(['config', 'current-context']);
    assert.equal(none.code, 1, 'no current context');
    assert.match(none.stderr, /no current context/);
  });
});
