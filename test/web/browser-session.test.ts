/**
 * The console's sign-in and files at the HTTP level, against a real `svc serve --seed-demo` over
 * HTTPS: the session cookie's attributes, CSRF on every cookie-authenticated mutation (a
 * cross-site POST without the token is refused), bearer tokens unchanged, sign-out, and the SPA
 * files with their content types, caching and security headers.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { call, REPO_ROOT, startServer, type TestServer } from '../helpers/server.js';

const ADMIN = { email: 'admin@demo.local', password: 'demo-password-1234' };
const JSON_CT = { 'content-type': 'application/json' };
let server: TestServer;

before(async () => {
  server = await startServer({ args: ['--seed-demo'], timeoutMs: 60_000 });
});
after(async () => {
  await server?.stop();
});

async function browserLogin(): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const res = await call(server, 'POST', '/v1/m/identity/browser-session', { body: JSON.stringify(ADMIN), headers: JSON_CT });
  assert.equal(res.status, 200, res.text);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0] as string;
  return { cookie, csrf: res.json().csrf_token, setCookie };
}

test('browser sign-in: the session is an HttpOnly, Secure, SameSite=Strict cookie, never in the answer', async () => {
  const { cookie, csrf, setCookie } = await browserLogin();
  assert.match(setCookie, /^__Host-svc_session=svcs_[^;]+; HttpOnly; Path=\/; Secure; SameSite=Strict; Max-Age=4319\d$/);
  assert.ok(csrf.length >= 40);
  const who = await call(server, 'GET', '/v1/auth/whoami', { headers: { cookie } });
  assert.equal(who.status, 200, who.text);
  assert.equal(who.json().kind, 'user');
  const again = await call(server, 'GET', '/v1/m/identity/browser-session', { headers: { cookie } });
  assert.equal(again.status, 200);
  assert.equal(again.json().csrf_token, csrf, 'a reloaded page gets the same CSRF token');
  const wrong = await call(server, 'POST', '/v1/m/identity/browser-session', {
    body: JSON.stringify({ ...ADMIN, password: 'not-the-password-1' }),
    headers: JSON_CT,
  });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers['set-cookie'], undefined);
});

test('CSRF: a cookie-authenticated mutation without the token (a cross-site POST) is refused; with it, it runs', async () => {
  const { cookie, csrf } = await browserLogin();
  const body = JSON.stringify({ name: 'csrf-probe', role: 'viewer' });
  // What a cross-site form or fetch can send: the cookie rides along, the header cannot.
  const crossSite = await call(server, 'POST', '/v1/tokens', { body, headers: { ...JSON_CT, cookie, origin: 'https://evil.example' } });
  assert.equal(crossSite.status, 403, crossSite.text);
  assert.equal(crossSite.json().error.code, 'forbidden');
  assert.match(crossSite.json().error.message, /x-csrf-token/);
  const forged = await call(server, 'POST', '/v1/tokens', {
    body,
    headers: { ...JSON_CT, cookie, 'x-csrf-token': csrf.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) },
  });
  assert.equal(forged.status, 403);
  // A body-less mutation (logout) is guarded the same way.
  const logoutNoToken = await call(server, 'DELETE', '/v1/m/identity/browser-session', { headers: { cookie } });
  assert.equal(logoutNoToken.status, 403);
  const ok = await call(server, 'POST', '/v1/tokens', { body, headers: { ...JSON_CT, cookie, 'x-csrf-token': csrf } });
  assert.equal(ok.status, 201, ok.text);
  const list = await call(server, 'GET', '/v1/tokens', { headers: { cookie } });
  assert.ok(list.json().items.some((t: { name: string }) => t.name === 'csrf-probe'), 'reads need no CSRF token');
});

test('bearer tokens work unchanged beside cookies, and an API key in the cookie is not accepted', async () => {
  const login = await call(server, 'POST', '/v1/auth/login', { body: JSON.stringify(ADMIN), headers: JSON_CT });
  const token = login.json().token as string;
  const issued = await call(server, 'POST', '/v1/tokens', {
    body: JSON.stringify({ name: 'bearer-ci', role: 'viewer' }),
    headers: { ...JSON_CT, authorization: `Bearer ${token}` },
  });
  assert.equal(issued.status, 201, 'a bearer mutation needs no CSRF token');
  const key = issued.json().token as string;
  const keyInCookie = await call(server, 'GET', '/v1/auth/whoami', { headers: { cookie: `__Host-svc_session=${key}` } });
  assert.equal(keyInCookie.status, 401);
  // The bearer header wins over a cookie: a bad bearer is not rescued by a good cookie.
  const { cookie } = await browserLogin();
  const both = await call(server, 'GET', '/v1/auth/whoami', { headers: { cookie, authorization: 'Bearer svcs_nope' } });
  assert.equal(both.status, 401);
});

test('browser sign-out revokes the session and clears the cookie', async () => {
  const { cookie, csrf } = await browserLogin();
  const out = await call(server, 'DELETE', '/v1/m/identity/browser-session', { headers: { cookie, 'x-csrf-token': csrf } });
  assert.equal(out.status, 204, out.text);
  assert.match(String(out.headers['set-cookie']), /^__Host-svc_session=; HttpOnly; Path=\/; Secure; SameSite=Strict; Max-Age=0$/);
  const after = await call(server, 'GET', '/v1/auth/whoami', { headers: { cookie } });
  assert.equal(after.status, 401, 'the session is revoked, not only forgotten by the browser');
});

test('console files: index.html on every page URL, hashed assets immutable, strict CSP, JSON 404 elsewhere', async () => {
  for (const p of [
    '/',
    '/overview',
    '/access-map?q=groomer&node=x&paths=escalation&path=0',
    '/agents/0190aaaa-0000-7000-8000-000000000000',
    '/audit?chain=system&action=auth.',
    '/admin/api-keys',
  ]) {
    const res = await call(server, 'GET', p);
    assert.equal(res.status, 200, p);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /connect-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.match(res.text, /<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    assert.doesNotMatch(res.text, /<script>|<style>/, 'no inline script or style in index.html');
  }
  const files = readdirSync(path.join(REPO_ROOT, 'dist', 'web', 'assets'));
  const js = files.find((f) => /^index-.*\.js$/.test(f)) as string;
  const css = files.find((f) => f.endsWith('.css')) as string;
  const jsRes = await call(server, 'GET', `/assets/${js}`, { headers: { 'accept-encoding': 'gzip, br' } });
  assert.equal(jsRes.status, 200);
  assert.equal(jsRes.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(jsRes.headers['content-encoding'], 'gzip');
  assert.equal(jsRes.headers['cache-control'], 'public, max-age=31536000, immutable');
  const cssRes = await call(server, 'GET', `/assets/${css}`);
  assert.equal(cssRes.headers['content-type'], 'text/css; charset=utf-8');
  assert.equal(cssRes.headers['content-encoding'], undefined, 'identity when gzip is not accepted');
  assert.ok(cssRes.text.includes('--accent'));
  const missing = await call(server, 'GET', '/assets/index-nope.js');
  assert.equal(missing.status, 404);
  assert.equal(missing.json().error.code, 'not_found');
  const traversal = await call(server, 'GET', '/assets/..%2Fpackage.json');
  assert.equal(traversal.status, 400);
  const api = await call(server, 'GET', '/v1/nope');
  assert.equal(api.status, 404);
  assert.equal(api.headers['content-type'], 'application/json');
  assert.equal((await call(server, 'GET', '/nope')).status, 404, 'no catch-all: an unknown top-level path is a JSON 404');
});
