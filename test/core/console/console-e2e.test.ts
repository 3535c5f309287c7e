/**
 * The console API on a real `svc serve` (SQLite, and Postgres when reachable) over HTTPS: effective
 * config with its sources and redaction, key custody against what the server publishes, setup status
 * from real state, the sealed secrets store, the license, update-check without a URL, and a support
 * bundle that carries none of the secrets the server was configured with.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import canonicalize from 'canonicalize';
import { call, setupAndLogin, startServer, tempDir, type TestServer } from '../../helpers/server.js';
import { createTempDatabase, pgQuery, pgTestDsn, type TempDatabase } from '../../helpers/pg.js';
import { formatTimestamp, nowEpochNs } from '../../../src/ledger/time.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };
const DSN_PASSWORD = 'DsnPassw0rd-9f8e7d';
const ENV_SECRET = 'env-secret-value-5a4b3c2d1e';
const CONSOLE_SECRET = 'console-secret-value-0q9w8e7r';
const SSO_SECRET = 'sso-client-secret-value-z1x2c3v4';

const licenseKey = generateKeyPairSync('ed25519');
const licensePub = licenseKey.publicKey.export({ type: 'spki', format: 'der' }).subarray(12).toString('base64');
function signedLicense(fields: Record<string, unknown>): string {
  const license = {
    license_id: 'lic-0001',
    holder: 'Acme Corp',
    limits: { users: 50, tenants: 5 },
    issued_at: '2026-01-01T00:00:00Z',
    expires_at: '2099-01-01T00:00:00Z',
    ...fields,
  };
  return JSON.stringify({
    license,
    signature: sign(null, Buffer.from(canonicalize(license) as string), licenseKey.privateKey).toString('base64'),
  });
}

const targets: Array<{ backend: 'sqlite' | 'postgres'; skip?: string }> = [{ backend: 'sqlite' }];
const pgTarget = await pgTestDsn();
targets.push({ backend: 'postgres', ...(pgTarget.skip ? { skip: pgTarget.skip } : {}) });

for (const t of targets) {
  describe(`${t.backend}: console API on a live server`, { skip: t.skip }, () => {
    let server: TestServer;
    let db: TempDatabase | undefined;
    let session: string;
    let tenant: string;
    const json = { 'content-type': 'application/json' };
    const as = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });
    const get = (p: string, token = session) => call(server, 'GET', p, { headers: as(token) });
    const send = (method: string, p: string, body: unknown, token = session) =>
      call(server, method, p, { body: JSON.stringify(body), headers: as(token, json) });
    let apiKey = '';

    before(async () => {
      const env: Record<string, string> = {
        SERVICE_EXTRA_API_TOKEN: ENV_SECRET,
        SERVICE_DRAIN_MS: '4000',
        SERVICE_LICENSE_PUBLIC_KEY: licensePub,
      };
      const args: string[] = [];
      if (t.backend === 'postgres') {
        db = await createTempDatabase(pgTarget.dsn as string);
        const url = new URL(db.dsn);
        url.password = DSN_PASSWORD; // trust auth ignores it; the point is that it never shows
        args.push('--store', 'postgres', '--dsn', url.toString());
      }
      server = await startServer({ env, args });
      ({ token: session, tenant } = await setupAndLogin(server, ADMIN));
      const issued = await send('POST', '/v1/tokens', { name: 'ci', superadmin: true });
      assert.equal(issued.status, 201, issued.text);
      apiKey = issued.json().token;
    });
    after(async () => {
      await server?.stop();
      await db?.drop();
    });

    test('every console route is superadmin only: an editor key gets 403, no token 401', async () => {
      const editor = (await send('POST', '/v1/tokens', { name: 'ed', role: 'editor', tenant })).json().token as string;
      for (const p of [
        '/v1/console/setup-status',
        '/v1/console/health-summary',
        '/v1/console/config/effective',
        '/v1/console/keys',
        '/v1/console/secrets',
        '/v1/console/license',
        '/v1/console/sso',
      ]) {
        assert.equal((await get(p, editor)).status, 403, p);
        assert.equal((await call(server, 'GET', p)).status, 401, p);
      }
    });

    test('bad input gets the error envelope (400, 404), never a 500', async () => {
      const cases: Array<[string, string, unknown, number]> = [
        ['PUT', '/v1/console/secrets', { name: 'ok-name' }, 400],
        ['PUT', '/v1/console/secrets', { name: 'x'.repeat(200), value: 'v' }, 400],
        ['PUT', '/v1/console/secrets', { name: 'ok', value: 'v', extra: 1 }, 400],
        ['PUT', '/v1/console/sso', { issuer: 'ftp://x', client_id: 'c' }, 400],
        ['PUT', '/v1/console/sso', { issuer: 'https://idp.example.test', client_id: 'c', scopes: ['email'] }, 400],
        [
          'PUT',
          '/v1/console/sso',
          { issuer: 'https://idp.example.test', client_id: 'c', role_mapping: [{ claim: 'g', value: 'v', tenant: 'nope', role: 'owner' }] },
          400,
        ],
        ['POST', '/v1/console/license', { license: 'not json at all' }, 400],
        ['POST', '/v1/console/license', { license: '{"license":{},"signature":"AAAA"}' }, 400],
      ];
      for (const [method, p, body, status] of cases) {
        const res = await send(method, p, body);
        assert.equal(res.status, status, `${method} ${p} ${JSON.stringify(body)}: ${res.text}`);
        assert.ok(typeof res.json().error.code === 'string' && typeof res.json().error.message === 'string');
      }
      for (const [method, p, status] of [
        ['DELETE', '/v1/console/secrets', 400],
        ['DELETE', '/v1/console/secrets?name=never-stored', 404],
        ['DELETE', '/v1/console/license', 404],
        ['DELETE', '/v1/console/sso', 404],
        ['POST', '/v1/console/sso/test', 404],
      ] as const) {
        const res = await call(server, method, p, { headers: as(session) });
        assert.equal(res.status, status, `${method} ${p}: ${res.text}`);
        assert.ok(res.json().error.code);
      }
      const start = await call(server, 'POST', '/v1/m/identity/sso/start', {
        body: JSON.stringify({ redirect_uri: 'http://127.0.0.1:1/cb' }),
        headers: json,
      });
      assert.equal(start.status, 501, 'SSO not configured');
      assert.equal(start.json().error.code, 'not_configured');
    });

    test('config/effective: sources flag/env/default; secrets and the DSN password redacted', async () => {
      const res = await get('/v1/console/config/effective');
      assert.equal(res.status, 200, res.text);
      const settings = res.json().settings as Array<{ name: string; value: unknown; source: string; redacted: boolean }>;
      const by = (n: string) => settings.find((s) => s.name === n);
      assert.equal(by('data_dir')?.source, 'flag');
      assert.equal(by('data_dir')?.value, server.dataDir);
      assert.equal(by('drain_ms')?.source, 'env');
      assert.equal(by('drain_ms')?.value, 4000);
      assert.equal(by('body_limit')?.source, 'default');
      assert.equal(by('body_limit')?.value, 1048576);
      assert.deepEqual(
        [by('extra_api_token')?.source, by('extra_api_token')?.redacted, by('extra_api_token')?.value],
        ['env', true, '[redacted]'],
      );
      if (t.backend === 'postgres') {
        assert.equal(by('dsn')?.source, 'flag');
        assert.equal(by('dsn')?.redacted, true);
        assert.match(String(by('dsn')?.value), /^postgres:\/\/postgres:\[redacted\]@127\.0\.0\.1/);
      }
      for (const secret of [ENV_SECRET, DSN_PASSWORD, session, apiKey]) assert.ok(!res.text.includes(secret), 'no secret in the answer');
    });

    test('keys: the audit signing key is the one /v1/audit/pubkey publishes; TLS and sealing keys listed', async () => {
      const keys = (await get('/v1/console/keys')).json().keys as Array<Record<string, any>>;
      const audit = keys.find((k) => k.purpose === 'audit_signing');
      const published = (await get('/v1/audit/pubkey')).json().keys as Array<{ key_id: string; public_key: string }>;
      assert.equal(audit?.key_id, published[0]?.key_id);
      assert.equal(audit?.public_key, published[0]?.public_key);
      assert.match(audit?.location, /audit-keys/);
      const tls = keys.find((k) => k.purpose === 'tls');
      assert.equal(tls?.fingerprint, server.fingerprintSha256);
      assert.equal(tls?.key_id, server.pinSha256);
      assert.match(tls?.public_key, /BEGIN PUBLIC KEY/);
      const seal = keys.find((k) => k.purpose === 'secrets_sealing');
      assert.equal(seal?.algorithm, 'aes-256-gcm');
      assert.equal(seal?.public_key, null);
      assert.ok(seal?.location.includes(path.join(server.dataDir, 'secrets.key')));
      assert.ok(!JSON.stringify(keys).includes('PRIVATE KEY'));
    });

    test('setup-status follows real state: a second superadmin completes dual control', async () => {
      const steps = () =>
        get('/v1/console/setup-status').then((r) =>
          Object.fromEntries((r.json().steps as Array<{ id: string; completed: boolean }>).map((s) => [s.id, s.completed])),
        );
      const before1 = await steps();
      assert.equal(before1['first_admin'], true);
      assert.equal(before1['tls_trusted'], false, 'the generated certificate is self-signed');
      assert.equal(before1['second_admin'], false);
      assert.equal(before1['sso'], false);
      const created = await send('POST', '/v1/users', {
        email: 'second@example.test',
        password: 'another long password',
        superadmin: true,
      });
      assert.equal(created.status, 201, created.text);
      assert.equal((await steps())['second_admin'], true);
      const healthRes = await get('/v1/console/health-summary');
      assert.equal(healthRes.status, 200, healthRes.text);
      const health = healthRes.json();
      assert.equal(health.ready, true);
      assert.equal(health.store.engine, t.backend);
      assert.ok(health.tls.days_left > 300);
      assert.equal(health.update.status, 'unknown');
      assert.ok(health.ledger.chains >= 1);
      assert.equal(health.users.superadmins_active, 2);
    });

    test('secrets: sealed at rest, listed by name and hint, referenced by SSO, deleted → SSO fails closed', async () => {
      const put = await send('PUT', '/v1/console/secrets', { name: 'webhook-token', value: CONSOLE_SECRET });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual([put.json().name, put.json().hint], ['webhook-token', CONSOLE_SECRET.slice(-4)]);
      assert.equal((await send('PUT', '/v1/console/secrets', { name: 'sso-client', value: SSO_SECRET })).status, 200);
      assert.equal((await send('PUT', '/v1/console/secrets', { name: 'Bad Name', value: 'x' })).json().error.code, 'bad_request');
      const missingRef = await send('PUT', '/v1/console/sso', {
        issuer: 'http://127.0.0.1:9/',
        client_id: 'svc',
        client_secret_ref: 'secret:nope',
      });
      assert.equal(missingRef.status, 400);
      const sso = await send('PUT', '/v1/console/sso', {
        issuer: 'http://127.0.0.1:9',
        client_id: 'svc',
        client_secret_ref: 'secret:sso-client',
        allowed_domains: ['example.test'],
      });
      assert.equal(sso.status, 200, sso.text);
      const list = await get('/v1/console/secrets');
      assert.deepEqual(
        list.json().items.map((i: { name: string; references: string[] }) => [i.name, i.references]),
        [
          ['sso-client', ['sso']],
          ['webhook-token', []],
        ],
      );
      for (const v of [CONSOLE_SECRET, SSO_SECRET]) assert.ok(!list.text.includes(v));
      if (t.backend === 'sqlite') {
        const file = new Database(path.join(server.dataDir, 'svc.db'), { readonly: true });
        const rows = file.prepare('select name, sealed from console_secrets').all() as Array<{ name: string; sealed: string }>;
        file.close();
        assert.equal(rows.length, 2);
        for (const r of rows) assert.match(r.sealed, /^sv1:[0-9a-f]{16}:/);
        assert.ok(!JSON.stringify(rows).includes(CONSOLE_SECRET));
      } else {
        const rows = await pgQuery<{ sealed: string }>(db?.dsn as string, 'select sealed from console_secrets');
        assert.ok(rows.every((r) => r.sealed.startsWith('sv1:')) && !JSON.stringify(rows).includes(CONSOLE_SECRET));
      }
      const ok = await call(server, 'POST', '/v1/console/sso/test', { headers: as(session) });
      const step = (r: typeof ok, name: string) =>
        (r.json().steps as Array<{ step: string; ok: boolean; detail: string }>).find((s) => s.step === name);
      assert.equal(step(ok, 'discovery')?.ok, false, 'nothing listens on port 9: provider down is reported');
      assert.equal(step(ok, 'client_secret')?.ok, true);
      assert.equal((await call(server, 'DELETE', '/v1/console/secrets?name=sso-client', { headers: as(session) })).status, 204);
      assert.equal((await call(server, 'DELETE', '/v1/console/secrets?name=sso-client', { headers: as(session) })).status, 404);
      const closed = await call(server, 'POST', '/v1/console/sso/test', { headers: as(session) });
      assert.equal(step(closed, 'client_secret')?.ok, false);
      assert.match(step(closed, 'client_secret')?.detail ?? '', /sso-client.*does not exist/);
      const audit = (await get('/v1/audit/system?limit=1000')).json().items as Array<{ action: string; meta?: Record<string, unknown> }>;
      const actions = audit.map((r) => r.action);
      for (const a of ['secret.put', 'secret.delete', 'sso.configure', 'sso.test']) assert.ok(actions.includes(a), a);
      assert.ok(!JSON.stringify(audit).includes(CONSOLE_SECRET) && !JSON.stringify(audit).includes(SSO_SECRET));
      // Set again so the bundle below is built on a server holding an SSO client secret.
      await send('PUT', '/v1/console/secrets', { name: 'sso-client', value: SSO_SECRET });
    });

    test('license: verified install, tampered and expired refused, removal; the ledger verifies throughout', async () => {
      assert.equal((await get('/v1/console/license')).json().status, 'none');
      const tampered = JSON.parse(signedLicense({}));
      tampered.license.limits.users = 5000;
      const bad = await send('POST', '/v1/console/license', { license: JSON.stringify(tampered) });
      assert.equal(bad.status, 400);
      assert.match(bad.json().error.message, /signature does not verify/);
      assert.equal(
        (await send('POST', '/v1/console/license', { license: signedLicense({ expires_at: '2020-01-01T00:00:00Z' }) })).status,
        400,
      );
      const ok = await send('POST', '/v1/console/license', { license: signedLicense({}) });
      assert.equal(ok.status, 200, ok.text);
      const shown = (await get('/v1/console/license')).json();
      assert.deepEqual([shown.status, shown.holder, shown.limits.users], ['valid', 'Acme Corp', 50]);
      assert.equal((await call(server, 'DELETE', '/v1/console/license', { headers: as(session) })).status, 204);
      assert.equal((await get('/v1/console/license')).json().status, 'none');
      const verify = (await get('/v1/audit/verify')).json();
      assert.equal(verify.ok, true);
    });

    test('update-check without a manifest URL answers unknown (no network)', async () => {
      const res = await call(server, 'POST', '/v1/console/update-check', { headers: as(session) });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json().status, 'unknown');
      assert.match(res.json().reason, /SERVICE_UPDATE_MANIFEST_URL/);
    });

    test('support bundle: AAL3 only; a tar.gz in which no secret, token or DSN password appears, raw or base64', async () => {
      const denied = await call(server, 'POST', '/v1/console/support-bundle', { headers: as(session) });
      assert.equal(denied.status, 403);
      assert.equal(denied.json().error.code, 'step_up_required');
      // A fresh session stepped up in the store, as a WebAuthn assertion would (tested in test/auth/webauthn).
      const login = await call(server, 'POST', '/v1/auth/login', { body: JSON.stringify(ADMIN), headers: json });
      const { token, session_id: sid } = login.json();
      const until = formatTimestamp(nowEpochNs() + 600n * 1_000_000_000n);
      if (t.backend === 'sqlite') {
        const file = new Database(path.join(server.dataDir, 'svc.db'));
        file.pragma('busy_timeout = 5000');
        file.prepare("update sessions set aal = 3, aal_expires_at = ?, amr = 'pwd,hwk' where id = ?").run(until, sid);
        file.close();
      } else
        await pgQuery(db?.dsn as string, "update sessions set aal = 3, aal_expires_at = $1, amr = 'pwd,hwk' where id = $2", [until, sid]);
      const res = await fetchBundle(server, token);
      assert.equal(res.status, 200, res.text);
      const dir = tempDir('svc-bundle-');
      const file = path.join(dir, 'bundle.tar.gz');
      writeFileSync(file, res.body);
      execFileSync('tar', ['-xzf', file, '-C', dir]);
      const files = walk(path.join(dir, 'svc-support'));
      const names = files.map((f) => path.relative(path.join(dir, 'svc-support'), f)).sort();
      assert.deepEqual(names, [
        'config-effective.json',
        'connectors.json',
        'health-summary.json',
        'keys.json',
        'ledger.json',
        'logs/README.txt',
        'manifest.json',
        'migrations.json',
        'setup-status.json',
        'store-stats.json',
        'version.json',
      ]);
      const secrets = [ENV_SECRET, CONSOLE_SECRET, SSO_SECRET, session, token, apiKey, ADMIN.password, ADMIN.email, 'second@example.test'];
      if (t.backend === 'postgres') secrets.push(DSN_PASSWORD);
      for (const f of files) {
        const text = readFileSync(f, 'utf8');
        for (const s of secrets) {
          assert.ok(!text.includes(s), `${path.basename(f)} holds ${s.slice(0, 6)}…`);
          assert.ok(!text.includes(Buffer.from(s).toString('base64')), `${path.basename(f)} holds base64 of ${s.slice(0, 6)}…`);
          assert.ok(
            !text.includes(Buffer.from(s).toString('base64url').slice(0, 16)),
            `${path.basename(f)} holds base64url of ${s.slice(0, 6)}…`,
          );
        }
        assert.ok(!/PRIVATE KEY|scrypt\$|\$scrypt/.test(text), `${path.basename(f)} holds key material or a password hash`);
      }
      const ledger = JSON.parse(readFileSync(path.join(dir, 'svc-support', 'ledger.json'), 'utf8'));
      assert.ok(ledger.chains?.length >= 1 && ledger.chains.every((c: { verify: { ok: boolean } }) => c.verify.ok), JSON.stringify(ledger));
      const migrations = JSON.parse(readFileSync(path.join(dir, 'svc-support', 'migrations.json'), 'utf8'));
      assert.equal(migrations.readiness.ok, true);
      assert.ok(migrations.known.some((m: { version: number; name: string }) => m.version === 24 && m.name === 'console'));
      const audit = (await get('/v1/audit/system?limit=1000')).json().items as Array<{ action: string }>;
      assert.ok(audit.some((r) => r.action === 'console.support_bundle'));
    });
  });
}

async function fetchBundle(server: TestServer, token: string): Promise<{ status: number; body: Buffer; text: string }> {
  const { request } = await import('undici');
  const res = await request(`${server.url}/v1/console/support-bundle`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    dispatcher: server.dispatcher,
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, body, text: res.statusCode === 200 ? '' : body.toString('utf8') };
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
