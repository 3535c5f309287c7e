/**
 * A newcomer's path over real HTTPS, the way a user runs it (issue 3 "Must show"): start the real
 * server → read the setup token from its stdout → `svc auth bootstrap` → `svc auth login` →
 * `svc auth whoami -o json` → issue an API key → use it → rotate it (old key: exit 3) → revoke.
 * Then the rest of the identity commands against the same server, asserting exit codes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { jsonOut, runSvc, tempDir } from './harness.js';

const EMAIL = 'first.admin@example.test';
const PASSWORD = 'a long enough passphrase';

let server: TestServer;
let home: string;
let env: Record<string, string>;
let trust: string[];

before(async () => {
  server = await startServer();
  home = tempDir('svc-newcomer-');
  env = { SERVICE_CONFIG: join(home, 'config.yaml') };
  trust = ['--server', server.url, '--pin-sha256', String(server.pinSha256)];
  writeFileSync(join(home, 'pw.txt'), `${PASSWORD}\n`, { mode: 0o600 });
});

after(async () => {
  await server?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const svc = (args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) =>
  runSvc(args, { env: { ...env, ...opts.env }, stdin: opts.stdin });

test('newcomer: bootstrap → login → whoami → issue → use → rotate → revoke', { timeout: 120_000 }, async () => {
  const setupToken = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0];
  assert.ok(setupToken, `setup token on stdout: ${server.stdout()}`);
  assert.ok(!JSON.stringify(server.logs()).includes(setupToken), 'the setup token never reaches the log');

  // A wrong token is refused (exit 3) and creates nothing.
  const wrong = await svc(
    ['auth', 'bootstrap', ...trust, '--setup-token-file', '-', '--email', EMAIL, '--password-file', join(home, 'pw.txt'), '-o', 'json'],
    { stdin: 'svcst_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n' },
  );
  assert.equal(wrong.code, 3, wrong.stderr);

  const boot = await svc(
    [
      'auth',
      'bootstrap',
      ...trust,
      '--setup-token-file',
      '-',
      '--email',
      EMAIL,
      '--password-file',
      join(home, 'pw.txt'),
      '--organization',
      'Acme',
      '--save-context=boot',
      '-o',
      'json',
    ],
    { stdin: `${setupToken}\n` },
  );
  assert.equal(boot.code, 0, boot.stderr);
  const booted = jsonOut(boot);
  assert.equal(booted.user.email, EMAIL);
  assert.equal(booted.user.superadmin, true);
  assert.equal(booted.organization.name, 'Acme');
  const tenant = booted.organization.id as string;
  assert.equal(booted.context, 'boot');
  const viaBoot = await svc(['auth', 'whoami', '--context', 'boot', '-o', 'json']);
  assert.equal(viaBoot.code, 0, viaBoot.stderr);
  assert.equal(jsonOut(viaBoot).user_id, booted.user.id);

  // Single use: a second redemption is a conflict (exit 5).
  const again = await svc([
    'auth',
    'bootstrap',
    ...trust,
    '--setup-token',
    setupToken,
    '--email',
    'x@example.test',
    '--password',
    PASSWORD,
  ]);
  assert.equal(again.code, 5, again.stderr);

  const login = await svc([
    'auth',
    'login',
    ...trust,
    '--email',
    EMAIL,
    '--password-file',
    join(home, 'pw.txt'),
    '--name',
    'acme',
    '-o',
    'json',
  ]);
  assert.equal(login.code, 0, login.stderr);
  assert.equal(jsonOut(login).context, 'acme');
  assert.equal(statSync(env.SERVICE_CONFIG as string).mode & 0o777, 0o600, 'saved context holds a token: 0600');

  // From here on, no flags: the saved context carries server, pin, token and tenant.
  const who = await svc(['auth', 'whoami', '-o', 'json']);
  assert.equal(who.code, 0, who.stderr);
  const me = jsonOut(who);
  assert.equal(me.kind, 'user');
  assert.equal(me.superadmin, true);
  assert.equal(me.aal, 1);
  assert.deepEqual(me.grants.map((g: { tenant: string; role: string }) => [g.tenant, g.role]), [[tenant, 'owner']]);

  const issue = await svc(['tokens', 'issue', '--name', 'ci', '--role', 'viewer', '-o', 'json']);
  assert.equal(issue.code, 0, issue.stderr);
  const key = jsonOut(issue);
  assert.match(key.token, /^svck_[A-Z2-7]{26}_[A-Z2-7]{52}$/);
  assert.equal(key.role, 'viewer');
  const listed = jsonOut(await svc(['tokens', 'ls', '-o', 'json']));
  assert.ok(listed.items.some((k: { id: string }) => k.id === key.id));
  assert.ok(!JSON.stringify(listed).includes(key.token), 'the secret is shown once only');

  // Use it: the key is its own principal.
  const asKey = await svc(['auth', 'whoami', '-o', 'json', '--token-file', '-'], { stdin: key.token });
  assert.equal(asKey.code, 0, asKey.stderr);
  assert.equal(jsonOut(asKey).kind, 'token');
  assert.equal(jsonOut(asKey).grants[0].role, 'viewer');

  // Rotation needs -y without a terminal (exit 2), then replaces the key.
  assert.equal((await svc(['tokens', 'rotate', key.id])).code, 2);
  const rotate = await svc(['tokens', 'rotate', key.id, '-y', '-o', 'json']);
  assert.equal(rotate.code, 0, rotate.stderr);
  const next = jsonOut(rotate);
  assert.notEqual(next.token, key.token);
  assert.equal(next.rotated_from, key.id);
  assert.equal(next.role, 'viewer');
  const oldKey = await svc(['auth', 'whoami', '-o', 'json'], { env: { SERVICE_TOKEN: key.token } });
  assert.equal(oldKey.code, 3, 'the old key is rejected at once');
  assert.equal(jsonOut(oldKey).error.http_status, 401);
  assert.equal((await svc(['auth', 'whoami'], { env: { SERVICE_TOKEN: next.token } })).code, 0);

  const revoke = await svc(['tokens', 'revoke', next.id, '-y', '-o', 'json']);
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.equal((await svc(['auth', 'whoami'], { env: { SERVICE_TOKEN: next.token } })).code, 3);
  // Revoking it again: it is no longer manageable → 404 (exit 4).
  assert.equal((await svc(['tokens', 'revoke', next.id, '-y'])).code, 4);
});

test('identity commands: users, tenants, superadmin, AAL3 refusals, logout', { timeout: 120_000 }, async () => {
  const pw = join(home, 'pw.txt');
  const created = await svc(['users', 'create', '--email', 'dev@example.test', '--password-file', pw, '--role', 'editor', '-o', 'json']);
  assert.equal(created.code, 0, created.stderr);
  const dev = jsonOut(created);
  assert.equal(dev.role, 'editor');
  const weak = await svc(['users', 'create', '--email', 'weak@example.test', '--password', 'short', '-o', 'json']);
  assert.equal(weak.code, 1);
  assert.equal(jsonOut(weak).error.code, 'weak_password');
  const members = jsonOut(await svc(['users', 'ls', '-o', 'json']));
  assert.deepEqual(members.items.map((u: { email: string }) => u.email).sort(), ['dev@example.test', EMAIL]);

  assert.equal((await svc(['users', 'disable', dev.id])).code, 2, 'destructive: -y required without a terminal');
  const disabled = await svc(['users', 'disable', dev.id, '-y', '-o', 'json']);
  assert.equal(disabled.code, 0, disabled.stderr);
  assert.equal(jsonOut(disabled).status, 'disabled');
  assert.equal(jsonOut(await svc(['users', 'enable', dev.id, '-o', 'json'])).status, 'active');

  const org = await svc(['tenants', 'create', '--name', 'Beta Corp', '--region', 'us-east', '-o', 'json']);
  assert.equal(org.code, 0, org.stderr);
  const beta = jsonOut(org);
  assert.ok(jsonOut(await svc(['tenants', 'ls', '-o', 'json'])).items.some((o: { id: string }) => o.id === beta.id));
  // Region and status need AAL3: a password session gets step_up_required (exit 3).
  const region = await svc(['tenants', 'set-region', beta.id, 'eu-west', '-y', '-o', 'json']);
  assert.equal(region.code, 3);
  assert.equal(jsonOut(region).error.code, 'step_up_required');
  const status = await svc(['tenants', 'set-status', beta.id, 'suspended', '-y', '-o', 'json']);
  assert.equal(jsonOut(status).error.code, 'step_up_required');
  assert.equal((await svc(['tenants', 'set-status', beta.id, 'paused', '-y'])).code, 2, 'unknown status is a usage error');
  assert.equal((await svc(['tenants', 'rm', beta.id])).code, 2);
  assert.equal((await svc(['tenants', 'rm', beta.id, '-y'])).code, 0);
  assert.equal((await svc(['tenants', 'rm', beta.id, '-y'])).code, 4, 'already gone');

  const supers = jsonOut(await svc(['superadmin', 'ls', '-o', 'json']));
  assert.deepEqual(supers.items.map((u: { email: string }) => u.email), [EMAIL]);
  const self = supers.items[0].id as string;
  assert.equal((await svc(['superadmin', 'disable', dev.id, '-y'])).code, 4, 'not a superadmin');
  const selfDisable = await svc(['superadmin', 'disable', self, '-y', '-o', 'json']);
  assert.equal(selfDisable.code, 3);
  assert.equal(jsonOut(selfDisable).error.code, 'step_up_required');

  const out = await svc(['auth', 'logout', '-o', 'json']);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(jsonOut(out).context, 'acme');
  const after = await svc(['auth', 'whoami', '-o', 'json']);
  assert.notEqual(after.code, 0, 'no credential left in the context');
});
