/**
 * The web console end to end in Chromium on a real `svc serve --seed-demo` over HTTPS: sign-in,
 * each page's main task, tenant switch, step-up with a CDP virtual authenticator, the CSP
 * refusing an injected script, a viewer without admin actions (and the API refusing them),
 * session expiry, sign-out; axe on every page; a screenshot of every page; and no request to
 * another origin during the whole run.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { call, startServer, type TestServer } from '../helpers/server.js';
import {
  ADMIN,
  assertAccessible,
  assertSameOrigin,
  guardedContext,
  launch,
  shot,
  signIn,
  skipReason,
  type GuardedContext,
} from './browser.js';

const skip = skipReason;
let server: TestServer;
let browser: Browser;
let g: GuardedContext;
let page: Page;
let bearer: string;
let demoTenant: string;
let otherTenant: string;
const errors: string[] = [];

const api = (method: string, p: string, body?: unknown, tenant?: string) =>
  call(server, method, p, {
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(tenant ? { 'x-service-tenant': tenant } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

before(async () => {
  if (skip) return;
  server = await startServer({ args: ['--seed-demo'], timeoutMs: 60_000 });
  const login = await call(server, 'POST', '/v1/auth/login', {
    body: JSON.stringify(ADMIN),
    headers: { 'content-type': 'application/json' },
  });
  bearer = login.json().token;
  demoTenant = (await api('GET', '/v1/auth/whoami')).json().grants[0].tenant;
  const org = await api('POST', '/v1/system/orgs', { name: 'Second Tenant' });
  assert.equal(org.status, 201, org.text);
  otherTenant = org.json().id;
  browser = await launch(server);
  g = await guardedContext(browser, server);
  page = await g.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    // The boot probe of the session answers 401 before sign-in: expected, not an error of the page.
    if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(m.text());
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test(
  'sign-in: the form starts a cookie session script cannot read; the overview shows health, ledger and attack paths',
  { skip, timeout: 60_000 },
  async () => {
    await page.goto(`${g.origin}/overview`);
    await page.waitForSelector('#login-title');
    await assertAccessible(page, 'sign-in');
    await shot(page, '01-sign-in');
    await page.fill('#f-email', ADMIN.email);
    await page.fill('#f-password', 'wrong-password-123');
    await page.click('button[type=submit]');
    await page.waitForSelector('.state.error');
    assert.match((await page.textContent('.state.error')) ?? '', /invalid e-mail or password/);
    await signIn(page, g.origin);
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie),
      '',
      'the session cookie is HttpOnly',
    );
    const cookies = await g.context.cookies();
    const session = cookies.find((c) => c.name === '__Host-svc_session');
    assert.ok(session?.httpOnly && session.secure && session.sameSite === 'Strict');
    const text = (await page.textContent('main')) ?? '';
    assert.match(text, /Health\s*ok/);
    assert.match(text, /Integrity\s*verified/);
    assert.match(text, /agents can escalate/);
    await assertAccessible(page, 'overview');
    await shot(page, '02-overview');
  },
);

test('tenant switch: the switcher changes the tenant every call is made in', { skip, timeout: 60_000 }, async () => {
  await page.click('nav a[href="/agents"]');
  await page.waitForSelector('table caption');
  assert.match((await page.textContent('table caption')) ?? '', /24 agents/);
  const sent = page.waitForRequest((r) => r.url().includes('/v1/agents') && r.headers()['x-service-tenant'] === otherTenant);
  await page.selectOption('#tenant-switch', otherTenant);
  await sent;
  await page.waitForSelector('.state.empty');
  assert.match((await page.textContent('main')) ?? '', /No agent yet/);
  await page.selectOption('#tenant-switch', demoTenant);
  await page.waitForSelector('table caption');
  assert.match((await page.textContent('table caption')) ?? '', /24 agents/);
});

test(
  'access map: find an agent, open its escalation paths, draw one with its steps; the URL brings it back',
  { skip, timeout: 90_000 },
  async () => {
    await page.click('nav a[href="/access-map"]');
    await page.waitForSelector('#graph[data-rendered]', { timeout: 30_000 });
    await assertAccessible(page, 'access map');
    await shot(page, '03-access-map');
    await page.fill('#f-map-q', 'backlog-groomer');
    await page.click('.hits button:has-text("backlog-groomer")');
    await page.waitForSelector('#paths-escalation');
    assert.match((await page.textContent('.panel')) ?? '', /Neighbors/);
    await page.click('#paths-escalation');
    await page.waitForSelector('.path-open');
    await page.click('.path-open >> nth=0');
    await page.waitForSelector('ol.steps li');
    const steps = await page.locator('ol.steps li').allTextContents();
    assert.ok(steps.length >= 1 && steps.every((s) => s.includes('→')), steps.join(' | '));
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('paths'), 'escalation');
    assert.equal(url.searchParams.get('path'), '0');
    assert.ok(url.searchParams.get('node'));
    await page.waitForTimeout(400);
    await shot(page, '04-attack-path');
    await page.goto(url.toString());
    await page.waitForSelector('ol.steps li', { timeout: 30_000 });
    await page.goto(`${g.origin}/access-map?view=table&q=backlog`);
    await page.waitForSelector('table caption');
    assert.match((await page.textContent('table caption')) ?? '', /\d+ edges/);
    await assertAccessible(page, 'access map table');
    await shot(page, '05-access-map-table');
  },
);

test('agents: create, edit, a concurrent change shown as a conflict, delete with confirmation', { skip, timeout: 60_000 }, async () => {
  await page.goto(`${g.origin}/agents`);
  await page.waitForSelector('table caption');
  await assertAccessible(page, 'agents');
  await shot(page, '06-agents');
  await page.click('button:has-text("New agent")');
  await page.fill('#f-name', 'console-e2e-agent');
  await page.fill('#f-labels', 'team=sec');
  await page.click('#agent-form button[type=submit]');
  await page.waitForSelector('#agent-title:has-text("console-e2e-agent")');
  const id = page.url().split('/').pop() as string;
  await assertAccessible(page, 'agent detail');
  await shot(page, '07-agent-detail');
  await page.click('button:has-text("Edit")');
  await page.fill('#f-kind', 'coding');
  // Someone else changes the agent meanwhile.
  const bump = await api('PATCH', `/v1/agents/${id}`, { version: 1, status: 'paused' }, demoTenant);
  assert.equal(bump.status, 200, bump.text);
  await page.click('#agent-form button[type=submit]');
  await page.waitForSelector('#conflict');
  assert.match((await page.textContent('#conflict')) ?? '', /Someone else changed this agent/);
  await shot(page, '08-agent-conflict');
  await page.click('#agent-form button:has-text("Cancel")');
  await page.waitForSelector('dd:has-text("paused")');
  await page.click('button:has-text("Edit")');
  await page.fill('#f-kind', 'coding');
  await page.click('#agent-form button[type=submit]');
  await page.waitForSelector('dd:has-text("coding")');
  await page.click('button.danger:has-text("Delete")');
  await page.click('#confirm button:has-text("Delete agent")');
  await page.waitForURL(`${g.origin}/agents`);
  assert.equal((await api('GET', `/v1/agents/${id}`, undefined, demoTenant)).status, 404);
});

test('workspaces: list, search, detail', { skip, timeout: 60_000 }, async () => {
  await page.goto(`${g.origin}/workspaces?q=infra`);
  await page.waitForSelector('table caption');
  assert.match((await page.textContent('table caption')) ?? '', /1 workspaces/);
  await assertAccessible(page, 'workspaces');
  await shot(page, '09-workspaces');
  await page.click('table a');
  await page.waitForSelector('#ws-detail-title');
  assert.match((await page.textContent('main')) ?? '', /secrets, state/);
});

test('audit log: verify now, record detail with integrity fields, export download, system chain', { skip, timeout: 60_000 }, async () => {
  await page.goto(`${g.origin}/audit`);
  await page.waitForSelector('table caption');
  await page.click('#verify-now');
  await page.waitForSelector('#verify-report');
  assert.match((await page.textContent('#verify-report')) ?? '', /Ledger verified/);
  await page.click('table tbody a >> nth=0');
  await page.waitForSelector('#record-title');
  const panel = (await page.textContent('.panel')) ?? '';
  for (const f of ['Record hash', 'Previous hash', 'Signature', 'Signing key']) assert.ok(panel.includes(f), f);
  await assertAccessible(page, 'audit log');
  await shot(page, '10-audit');
  const download = page.waitForEvent('download');
  await page.click('#export');
  const file = await download;
  const stream = await file.createReadStream();
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  assert.match(text, /^CEF:0\|/m, 'a CEF export');
  await page.goto(`${g.origin}/audit?chain=system&action=auth.`);
  await page.waitForSelector('table caption');
  assert.match((await page.textContent('table caption')) ?? '', /system chain/);
  const actions = await page.locator('table tbody td:nth-child(4)').allTextContents();
  assert.ok(actions.length > 0 && actions.every((a) => a.startsWith('auth.')), actions.join(','));
  await shot(page, '11-audit-system');
});

test('API keys: issue shows the secret once, revoke stops it', { skip, timeout: 60_000 }, async () => {
  await page.goto(`${g.origin}/admin/api-keys`);
  await page.waitForSelector('#issue-key');
  await page.click('#issue-key');
  await page.fill('#f-key-name', 'console-ci');
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#key-secret');
  const secret = await page.inputValue('#key-secret');
  assert.match(secret, /^svck_/);
  assert.equal((await call(server, 'GET', '/v1/auth/whoami', { headers: { authorization: `Bearer ${secret}` } })).status, 200);
  await shot(page, '12-api-key-issued');
  await page.click('#key-form button:has-text("Done")');
  await page.waitForSelector('td:has-text("console-ci")');
  assert.equal(await page.locator('#key-secret').count(), 0, 'the secret is not shown again');
  await assertAccessible(page, 'API keys');
  await page.click('button[aria-label="Revoke console-ci"]');
  await page.click('#confirm button:has-text("Revoke key")');
  await page.waitForSelector('td:has-text("console-ci")', { state: 'detached' });
  assert.equal((await call(server, 'GET', '/v1/auth/whoami', { headers: { authorization: `Bearer ${secret}` } })).status, 401);
});

test(
  "step-up in place: changing a tenant's region asks for the security key (CDP virtual authenticator), then succeeds",
  { skip, timeout: 90_000 },
  async () => {
    const cdp = await g.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await page.goto(`${g.origin}/admin/tenants`);
    await page.waitForSelector('table caption');
    await assertAccessible(page, 'tenants');
    await shot(page, '13-tenants');
    await page.click(`button[aria-label="Change region of Second Tenant"]`);
    await page.fill('#f-region', 'eu-west');
    await page.click('#region-form button[type=submit]');
    await page.waitForSelector('#step-up[open]');
    await shot(page, '14-step-up');
    await page.click('#step-up-go');
    // No key yet: the dialog offers to register one first, then steps up with it.
    await page.waitForSelector('#step-up-go:has-text("Register a key and continue")');
    await page.click('#step-up-go');
    await page
      .waitForSelector('#step-up[open]', { state: 'detached', timeout: 30_000 })
      .catch(async () => page.waitForSelector('#step-up:not([open])'));
    await page.waitForSelector(`[data-testid="region-${otherTenant}"]:has-text("eu-west")`);
    const orgs = (await api('GET', '/v1/system/orgs')).json().items as Array<{ id: string; region: string }>;
    assert.equal(orgs.find((o) => o.id === otherTenant)?.region, 'eu-west');
    assert.match((await page.textContent('[data-testid="who"]')) ?? '', /AAL3/);
    await page.goto(`${g.origin}/admin/security-keys`);
    await page.waitForSelector('table caption');
    assert.match((await page.textContent('table')) ?? '', /security key/);
    await assertAccessible(page, 'security keys');
    await shot(page, '15-security-keys');
    for (const tab of ['users', 'members']) {
      await page.goto(`${g.origin}/admin/${tab}`);
      await page.waitForSelector('table caption');
      await assertAccessible(page, tab);
      await shot(page, `16-admin-${tab}`);
    }
  },
);

test('CSP: a script injected into the page does not run', { skip, timeout: 30_000 }, async () => {
  await page.goto(`${g.origin}/overview`);
  await page.waitForSelector('[data-ready]');
  const before = errors.length;
  const outcome = await page.evaluate(async () => {
    const w = globalThis as unknown as { document: any; pwned?: number; addEventListener: (t: string, f: (e: any) => void) => void };
    const violation: string[] = [];
    w.document.addEventListener('securitypolicyviolation', (e: any) => violation.push(e.violatedDirective));
    const s = w.document.createElement('script');
    s.textContent = 'window.pwned = 1';
    w.document.body.append(s);
    const img = w.document.createElement('div');
    img.innerHTML = '<img src="x" onerror="window.pwned = 2">';
    w.document.body.append(img);
    await new Promise((r) => setTimeout(r, 300));
    return { pwned: w.pwned ?? null, violation };
  });
  assert.deepEqual(outcome, { pwned: null, violation: ['script-src-elem', 'script-src-attr'] });
  // The refusals (and the missing image) are expected here; every other page must stay clean.
  errors.splice(before);
});

test(
  'a viewer sees no admin action, and the API refuses them anyway; an ended session returns to sign-in',
  { skip, timeout: 90_000 },
  async () => {
    const viewer = { email: 'viewer@demo.local', password: 'viewer-password-1234' };
    const made = await api('POST', '/v1/users', { ...viewer, role: 'viewer' }, demoTenant);
    assert.equal(made.status, 201, made.text);
    const vg = await guardedContext(browser, server);
    const vp = await vg.context.newPage();
    await signIn(vp, vg.origin, viewer);
    await vp.goto(`${vg.origin}/agents`);
    await vp.waitForSelector('table caption');
    assert.equal(await vp.locator('button:has-text("New agent")').count(), 0);
    await vp.click('table a >> nth=0');
    await vp.waitForSelector('#agent-title');
    assert.equal(await vp.locator('button:has-text("Edit"), button:has-text("Delete")').count(), 0);
    await vp.goto(`${vg.origin}/admin`);
    await vp.waitForSelector('#admin-title');
    const tabs = await vp.locator('.tabs a').allTextContents();
    assert.deepEqual(tabs, ['API keys', 'Security keys'], 'no users, memberships or tenants for a viewer');
    await shot(vp, '17-viewer-admin');
    const refused = await vp.evaluate(async () => {
      const f = (globalThis as unknown as { fetch: typeof fetch }).fetch;
      const { csrf_token } = (await (await f('/v1/m/identity/browser-session')).json()) as { csrf_token: string };
      const h = { 'content-type': 'application/json', 'x-csrf-token': csrf_token };
      const agent = await f('/v1/agents', { method: 'POST', headers: h, body: JSON.stringify({ name: 'sneaky' }) });
      const user = await f('/v1/users', {
        method: 'POST',
        headers: h,
        body: JSON.stringify({ email: 'x@demo.local', password: 'password-12345678' }),
      });
      return [agent.status, ((await agent.json()) as { error: { code: string } }).error.code, user.status];
    });
    assert.deepEqual(refused, [403, 'forbidden', 403]);
    // The session ends (cookie gone): the next call shows the sign-in page with a notice.
    await vg.context.clearCookies();
    await vp.click('nav a[href="/workspaces"]');
    await vp.waitForSelector('#login-title');
    assert.match((await vp.textContent('main')) ?? '', /Your session ended/);
    assertSameOrigin(vg);
    await vg.context.close();
  },
);

test(
  'sign-out: the session is revoked and the page is back at sign-in; nothing left the origin all run',
  { skip, timeout: 30_000 },
  async () => {
    await page.goto(`${g.origin}/overview`);
    await page.waitForSelector('[data-ready]');
    await page.click('#sign-out');
    await page.waitForSelector('#login-title');
    assert.equal((await g.context.cookies()).filter((c) => c.name === '__Host-svc_session').length, 0);
    const who = await page.evaluate(async () => (await (globalThis as unknown as { fetch: typeof fetch }).fetch('/v1/auth/whoami')).status);
    assert.equal(who, 401);
    assertSameOrigin(g);
    assert.deepEqual(
      errors.filter((e) => !/status of (401|403|409)/.test(e)),
      [],
      'no script error on any page',
    );
  },
);
