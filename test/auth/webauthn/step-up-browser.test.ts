/**
 * The AAL3 step-up for real: Chromium (Debian `chromium`) with a CDP virtual authenticator
 * (ctap2, internal, resident keys, user verification) drives the same-origin page served by a
 * real `svc serve` over HTTPS. Log in, register, step up; the AAL3 route then succeeds, and
 * before the step-up (and for an API key) it answers 403 `step_up_required`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { call, startServer, type TestServer } from '../../helpers/server.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM)
  ? false
  : `chromium is not installed at ${CHROMIUM} (apt-get install -y --no-install-recommends chromium fonts-liberation)`;

const EMAIL = 'owner@example.test';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let tenantId: string;

before(async () => {
  if (skip) return;
  server = await startServer();
  const token = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0];
  assert.ok(token, 'setup token on stdout');
  const setup = await call(server, 'POST', '/v1/setup', {
    body: JSON.stringify({ token, email: EMAIL, password: PASSWORD }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(setup.status, 201, setup.text);
  tenantId = setup.json().organization.id;
});

after(async () => {
  if (server) await server.stop();
});

const json = (token: string, body?: unknown) => ({
  headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
  ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
});

test('webauthn step-up in real Chromium with a virtual authenticator', { skip, timeout: 90_000 }, async () => {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      `--ignore-certificate-errors-spki-list=${server.pinSha256}`,
    ],
  });
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    const origin = `https://localhost:${server.port}`;
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
    const res = await page.goto(`${origin}/ui/step-up`);
    assert.equal(res?.status(), 200);
    assert.match(res?.headers()['content-security-policy'] ?? '', /script-src 'sha256-/);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { isSecureContext: boolean }).isSecureContext), true);

    const click = async (id: string): Promise<{ state: string; body: any }> => {
      // A sentinel first, so the wait below cannot see the previous action's final state.
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      await page.evaluate(() => ((globalThis as any).document.getElementById('status').dataset.state = 'clicked'));
      await page.click(`#${id}`);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      await page.waitForFunction(
        () => !['clicked', 'busy'].includes((globalThis as any).document.getElementById('status').dataset.state),
        undefined,
        { timeout: 30_000 },
      );
      const state = (await page.getAttribute('#status', 'data-state')) ?? '';
      const text = (await page.textContent('#status')) ?? '';
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* plain text */
      }
      return { state, body };
    };

    await page.fill('#email', EMAIL);
    await page.fill('#password', PASSWORD);
    const login = await click('login');
    assert.equal(login.state, 'ok', JSON.stringify(login.body));
    const session = await page.inputValue('#token');
    assert.match(session, /^svcs_/);

    // Below AAL3: the AAL3 route refuses, and so does a step-up without any credential.
    const before = await call(server, 'PUT', `/v1/system/orgs/${tenantId}/region`, json(session, { region: 'eu-west' }));
    assert.equal(before.status, 403, before.text);
    assert.equal(before.json().error.code, 'step_up_required');
    const early = await click('stepup');
    assert.equal(early.state, 'error');
    assert.equal(early.body.error.code, 'conflict');

    const reg = await click('register');
    assert.equal(reg.state, 'ok', `${JSON.stringify(reg.body)} ${pageErrors.join(' | ')}`);
    assert.equal(reg.body.name, 'security key');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1, 'the virtual authenticator holds the new credential');

    // Registered but not stepped up: still AAL1.
    assert.equal((await call(server, 'PUT', `/v1/system/orgs/${tenantId}/region`, json(session, { region: 'eu-west' }))).status, 403);

    const up = await click('stepup');
    assert.equal(up.state, 'ok', JSON.stringify(up.body));
    assert.equal(up.body.aal, 3);
    const expires = Date.parse(up.body.aal_expires_at);
    assert.ok(
      expires > Date.now() + 14 * 60_000 && expires <= Date.now() + 15 * 60_000 + 5_000,
      `AAL3 lasts 15 minutes, got ${up.body.aal_expires_at}`,
    );

    const who = await call(server, 'GET', '/v1/auth/whoami', json(session));
    assert.equal(who.json().aal, 3);
    assert.ok(who.json().amr.includes('hwk'));

    const after = await call(server, 'PUT', `/v1/system/orgs/${tenantId}/region`, json(session, { region: 'eu-west' }));
    assert.equal(after.status, 200, after.text);
    assert.equal(after.json().region, 'eu-west');

    // A second step-up works too (the signature counter moves forward).
    assert.equal((await click('stepup')).state, 'ok');

    // A new session of the same user starts at AAL1 again.
    const other = await call(server, 'POST', '/v1/auth/login', {
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
      headers: { 'content-type': 'application/json' },
    });
    const otherToken = other.json().token as string;
    assert.equal(
      (await call(server, 'PUT', `/v1/system/orgs/${tenantId}/status`, json(otherToken, { status: 'active' }))).json().error.code,
      'step_up_required',
    );
    // …and it may not enrol a second authenticator without stepping up first.
    const enrol = await call(server, 'POST', '/v1/m/identity/webauthn/registration/options', json(otherToken));
    assert.equal(enrol.status, 403);
    assert.equal(enrol.json().error.code, 'step_up_required');

    // An API key never reaches AAL3, not even one issued from the stepped-up session.
    const issued = await call(server, 'POST', '/v1/tokens', json(session, { name: 'ci', role: 'owner', superadmin: true }));
    assert.equal(issued.status, 201, issued.text);
    const key = issued.json().token as string;
    const byKey = await call(server, 'PUT', `/v1/system/orgs/${tenantId}/region`, json(key, { region: 'us-east' }));
    assert.equal(byKey.status, 403);
    assert.equal(byKey.json().error.code, 'step_up_required');
    const keyStepUp = await call(server, 'POST', '/v1/m/identity/step-up/options', json(key));
    assert.equal(keyStepUp.status, 403);

    // The ceremonies are on the system chain.
    const audit = await call(server, 'GET', '/v1/audit/system?limit=1000', json(session));
    assert.equal(audit.status, 200, audit.text);
    const actions = (audit.json().items as Array<{ action: string }>).map((r) => r.action);
    assert.ok(actions.includes('webauthn.register'), actions.join(','));
    assert.ok(actions.includes('auth.step_up'), actions.join(','));
    await context.close();
  } finally {
    await browser.close();
  }
});
