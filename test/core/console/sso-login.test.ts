/**
 * SSO against a real OpenID provider (oidc-provider on loopback) through the whole redirect flow in
 * Chromium: start → provider login and consent → loopback callback → complete → an `svcs_` session
 * provisioned by the role mapping. Then the failure paths a real provider produces: bad state, a
 * replayed code, a disallowed domain, a deleted client secret, the provider down.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, setupAndLogin, startServer, SVC_BIN, type TestServer } from '../../helpers/server.js';
import { startProvider, type TestProvider } from '../../helpers/oidc-provider.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : 'chromium is not installed (/usr/bin/chromium)';
const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

let server: TestServer;
let provider: TestProvider;
let session: string;
let tenant: string;
let loopback: Server;
let redirectUri: string;
let nextCallback: (q: URLSearchParams) => void = () => undefined;

const as = (token: string, body?: unknown) => ({
  headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
  ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
});
const post = (p: string, body: unknown, token?: string) =>
  call(server, 'POST', p, {
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });

before(async () => {
  server = await startServer();
  ({ token: session, tenant } = await setupAndLogin(server, ADMIN));
  provider = await startProvider();
  provider.accounts.set('alice', { email: 'alice@example.test', email_verified: true, groups: ['svc-editors'], name: 'Alice' });
  provider.accounts.set('mallory', { email: 'mallory@evil.test', email_verified: true, groups: ['svc-editors'] });
  loopback = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    nextCallback(q);
  });
  await new Promise<void>((r) => loopback.listen(0, '127.0.0.1', () => r()));
  redirectUri = `http://127.0.0.1:${(loopback.address() as AddressInfo).port}/callback`;
  assert.equal(
    (await call(server, 'PUT', '/v1/console/secrets', as(session, { name: 'oidc-client', value: provider.clientSecret }))).status,
    200,
  );
  const put = await call(server, 'PUT', '/v1/console/sso', as(session, {
    issuer: provider.issuer,
    client_id: provider.clientId,
    client_secret_ref: 'secret:oidc-client',
    scopes: ['openid', 'email', 'groups'],
    role_mapping: [{ claim: 'groups', value: 'svc-editors', tenant, role: 'editor' }],
    allowed_domains: ['example.test'],
  }));
  assert.equal(put.status, 200, put.text);
});
after(async () => {
  await server?.stop();
  await provider?.stop();
  loopback?.close();
});

/** Drive Chromium from the authorization URL through the provider's login and consent to a loopback callback. */
async function browserLogin(url: string, login: string, got?: Promise<unknown>): Promise<URLSearchParams> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    const callback = got ?? new Promise<URLSearchParams>((resolve) => (nextCallback = resolve));
    await page.goto(url);
    await page.fill('input[name="login"]', login);
    await page.fill('input[name="password"]', 'any password');
    await page.click('button[type="submit"]');
    // Consent (first time for this client and account), then the redirect to the loopback listener.
    const consent = page.locator('button:has-text("Continue")');
    await Promise.race([callback, consent.waitFor({ timeout: 15_000 }).then(() => consent.click())]);
    if (got) await page.waitForURL(/127\.0\.0\.1:\d+\/callback/, { timeout: 15_000 });
    return got ? new URL(page.url()).searchParams : ((await callback) as URLSearchParams);
  } finally {
    await browser.close();
  }
}

async function start(): Promise<{ authorization_url: string; state: string }> {
  const res = await post('/v1/m/identity/sso/start', { redirect_uri: redirectUri });
  assert.equal(res.status, 200, res.text);
  return res.json();
}

test('sso/test reports each step against the real provider', { skip }, async () => {
  const res = await call(server, 'POST', '/v1/console/sso/test', as(session));
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(
    res.json().steps.map((s: { step: string; ok: boolean }) => [s.step, s.ok]),
    [
      ['discovery', true],
      ['issuer', true],
      ['pkce', true],
      ['endpoints', true],
      ['jwks', true],
      ['client_secret', true],
    ],
  );
});

test(
  'Chromium through the provider: a provisioned user with the mapped role gets an svcs_ session; state and code are single-use',
  { skip, timeout: 120_000 },
  async () => {
    const { authorization_url, state } = await start();
    const url = new URL(authorization_url);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(url.searchParams.get('nonce') && url.searchParams.get('code_challenge'));
    const cb = await browserLogin(authorization_url, 'alice');
    assert.equal(cb.get('state'), state);
    const code = cb.get('code') as string;
    const done = await post('/v1/m/identity/sso/complete', { state, code, iss: cb.get('iss') ?? undefined });
    assert.equal(done.status, 200, done.text);
    const r = done.json();
    assert.match(r.token, /^svcs_/);
    assert.deepEqual([r.email, r.provisioned, r.aal], ['alice@example.test', true, 1]);
    const who = (await call(server, 'GET', '/v1/auth/whoami', as(r.token))).json();
    assert.equal(who.user_id, r.user_id);
    assert.deepEqual(
      who.grants.map((g: { tenant: string; role: string }) => [g.tenant, g.role]),
      [[tenant, 'editor']],
    );
    assert.ok(who.amr?.includes('fed'), JSON.stringify(who));
    // The same state again: consumed. A new state with the old code: the provider refuses the replay.
    const again = await post('/v1/m/identity/sso/complete', { state, code });
    assert.equal(again.status, 401);
    assert.match(again.json().error.message, /unknown or expired state/);
    const second = await start();
    const replay = await post('/v1/m/identity/sso/complete', { state: second.state, code });
    assert.equal(replay.status, 401, replay.text);
    assert.match(replay.json().error.message, /SSO login failed/);
    const bad = await post('/v1/m/identity/sso/complete', { state: 'not-a-state', code });
    assert.equal(bad.status, 401);
    // A second login by the same person finds the link, provisions nothing new.
    const third = await start();
    const cb3 = await browserLogin(third.authorization_url, 'alice');
    const done3 = await post('/v1/m/identity/sso/complete', {
      state: third.state,
      code: cb3.get('code'),
      iss: cb3.get('iss') ?? undefined,
    });
    assert.equal(done3.status, 200, done3.text);
    assert.deepEqual([done3.json().user_id, done3.json().provisioned], [r.user_id, false]);
    // Password login for the provisioned account never works (it has no password).
    assert.equal((await post('/v1/auth/login', { email: 'alice@example.test', password: 'any password at all' })).status, 401);
    const audit = (await call(server, 'GET', '/v1/audit/system?limit=1000', as(session))).json().items as Array<{
      action: string;
      meta?: string;
    }>;
    assert.equal(audit.filter((a) => a.action === 'auth.sso_login').length, 2);
    assert.ok(
      audit
        .filter((a) => a.action === 'auth.sso_login_failed')
        .map((a) => JSON.parse(a.meta ?? '{}').reason)
        .includes('bad_state'),
    );
  },
);

test(
  'svc auth login --sso: prints the URL, takes the redirect on its loopback port, saves a session context',
  { skip, timeout: 120_000 },
  async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'svc-sso-cli-'));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && v !== undefined) env[k] = v;
    env['SERVICE_CONFIG'] = path.join(home, 'config.yaml');
    const child = spawn(
      process.execPath,
      [SVC_BIN, 'auth', 'login', '--sso', '--server', server.url, '--pin-sha256', String(server.pinSha256), '--name', 'sso', '-o', 'json'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const urlSeen = new Promise<string>((resolve) =>
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        const m = /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/.exec(stderr);
        if (m) resolve(m[1] as string);
      }),
    );
    const exited = new Promise<number | null>((r) => child.on('close', r));
    const url = await urlSeen;
    await browserLogin(url, 'alice', exited);
    assert.equal(await exited, 0, stderr);
    const out = JSON.parse(stdout.trim());
    assert.equal(out.context, 'sso');
    assert.equal(out.kind, 'user');
    assert.deepEqual(
      out.grants.map((g: { role: string }) => g.role),
      ['editor'],
    );
  },
);

test('a disallowed e-mail domain is refused and nothing is provisioned', { skip, timeout: 120_000 }, async () => {
  const { authorization_url, state } = await start();
  const cb = await browserLogin(authorization_url, 'mallory');
  const res = await post('/v1/m/identity/sso/complete', { state, code: cb.get('code'), iss: cb.get('iss') ?? undefined });
  assert.equal(res.status, 401);
  assert.match(res.json().error.message, /domain evil\.test is not allowed/);
  const users = (
    await call(server, 'GET', `/v1/users?limit=100`, { headers: { authorization: `Bearer ${session}`, 'x-service-tenant': tenant } })
  ).json();
  assert.ok(!JSON.stringify(users).includes('mallory'));
});

test('deleted client secret: login fails closed (503), never as a public client; provider down: 503', { skip }, async () => {
  assert.equal((await call(server, 'DELETE', '/v1/console/secrets?name=oidc-client', as(session))).status, 204);
  const closed = await post('/v1/m/identity/sso/start', { redirect_uri: redirectUri });
  assert.equal(closed.status, 503);
  assert.match(closed.json().error.message, /oidc-client.*does not exist/);
  await call(server, 'PUT', '/v1/console/secrets', as(session, { name: 'oidc-client', value: provider.clientSecret }));
  assert.equal((await post('/v1/m/identity/sso/start', { redirect_uri: redirectUri })).status, 200);
  await provider.stop();
  const down = await post('/v1/m/identity/sso/start', { redirect_uri: redirectUri });
  assert.equal(down.status, 503);
  assert.match(down.json().error.message, /unreachable/);
  const t = (await call(server, 'POST', '/v1/console/sso/test', as(session))).json();
  assert.deepEqual([t.ok, t.steps[0].step, t.steps[0].ok], [false, 'discovery', false]);
});
