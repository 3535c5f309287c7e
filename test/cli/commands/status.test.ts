import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { jsonOut, makeCert, runSvc, startFakeServer, tempDir } from '../harness.js';
import type { FakeServer, TestCert } from '../harness.js';

const OK_DOC = {
  status: 'ok',
  version: 'dev',
  uptime_seconds: 5,
  components: { http: { status: 'ok', engine: 'uws-native' }, store: { status: 'ok', backend: 'sqlite' } },
};

describe('svc status over HTTPS against a real node:https server', () => {
  let cert: TestCert;
  let server: FakeServer;

  before(async () => {
    cert = makeCert();
    server = await startFakeServer(cert);
  });
  after(async () => server.close());

  const status = (...args: string[]) => runSvc(['status', '--server', server.url, '-o', 'json', ...args]);

  it('trusts the server through --ca-cert and sends the token and tenant', async () => {
    server.routes.set('GET /status', { status: 200, body: OK_DOC });
    server.seen.length = 0;
    const run = await status('--ca-cert', cert.certPath, '--token', 'svck_abc_def', '--tenant', '0190a000-0000-7000-8000-000000000001');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(jsonOut(run), OK_DOC);
    // Two requests: /status and /v1/server-info (whether setup is pending); both carry the credential.
    const seen = server.seen.filter((r) => r.url === '/status');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.headers.authorization, 'Bearer svck_abc_def');
    assert.equal(seen[0]?.headers['x-service-tenant'], '0190a000-0000-7000-8000-000000000001');
  });

  it('trusts the self-signed server through --pin-sha256 computed by openssl, as base64 or hex', async () => {
    server.routes.set('GET /status', { status: 200, body: OK_DOC });
    for (const pin of [cert.pinBase64, cert.pinHex, `sha256//${cert.pinBase64}`]) {
      const run = await status('--pin-sha256', pin);
      assert.equal(run.code, 0, `${pin}: ${run.stderr}`);
      assert.equal(jsonOut(run).status, 'ok');
    }
    // One matching pin among several is enough (backup pins, RFC 7469 §4.3).
    const withBackup = await status('--pin-sha256', Buffer.alloc(32, 7).toString('base64'), '--pin-sha256', cert.pinHex);
    assert.equal(withBackup.code, 0, withBackup.stderr);
  });

  it('refuses a wrong pin before sending any request byte: exit 6, tls_pin_mismatch', async () => {
    server.seen.length = 0;
    const run = await status('--pin-sha256', Buffer.alloc(32, 1).toString('base64'), '--token', 'svck_secret_value');
    assert.equal(run.code, 6);
    const doc = jsonOut(run);
    assert.equal(doc.error.code, 'tls_pin_mismatch');
    assert.ok(doc.error.message.includes(cert.pinBase64), 'names the pin the server presented');
    assert.equal(server.seen.length, 0, 'the server never received the request (nor the token)');
  });

  it('fails with exit 6 (tls_error) when the certificate is not trusted at all', async () => {
    server.seen.length = 0;
    const run = await status();
    assert.equal(run.code, 6);
    assert.equal(jsonOut(run).error.code, 'tls_error');
    assert.match(run.stderr, /^svc: tls_error: .*--ca-cert or --pin-sha256\n$/);
    assert.equal(server.seen.length, 0);
  });

  it('--insecure skips verification but warns on stderr', async () => {
    server.routes.set('GET /status', { status: 200, body: OK_DOC });
    const run = await status('--insecure');
    assert.equal(run.code, 0);
    assert.match(run.stderr, /warning: --insecure/);
  });

  it('exits 7 when the status is not fully ok, and 8 when it carries no status', async () => {
    const degraded = { ...OK_DOC, status: 'degraded' };
    server.routes.set('GET /status', { status: 200, body: degraded });
    const run = await status('--ca-cert', cert.certPath);
    assert.equal(run.code, 7);
    assert.deepEqual(jsonOut(run), degraded);
    const text = await runSvc(['status', '--server', server.url, '--ca-cert', cert.certPath]);
    assert.equal(text.code, 7);
    assert.match(text.stdout, /^status: {2}degraded$/m);
    server.routes.set('GET /status', { status: 200, body: { version: 'dev' } });
    const unknown = await status('--ca-cert', cert.certPath);
    assert.equal(unknown.code, 8);
    assert.equal(jsonOut(unknown).error.code, 'indeterminate');
  });

  it('maps error statuses with the error envelope to the spec exit codes', async () => {
    const cases: Array<[number, string, number]> = [
      [401, 'unauthenticated', 3], [403, 'forbidden', 3], [404, 'not_found', 4], [409, 'setup_required', 5],
      [500, 'internal', 6], [503, 'unavailable', 6], [400, 'bad_request', 1], [429, 'rate_limited', 1],
    ];
    for (const [httpStatus, code, exit] of cases) {
      server.routes.set('GET /status', { status: httpStatus, body: { error: { code, message: `test ${code}` } } });
      const run = await status('--ca-cert', cert.certPath);
      assert.equal(run.code, exit, `HTTP ${httpStatus}`);
      assert.deepEqual(jsonOut(run), { error: { code, message: `test ${code}`, exit_code: exit, http_status: httpStatus } });
      assert.equal(run.stderr, `svc: ${code}: test ${code}\n`);
    }
  });
});

describe('svc status: cleartext, reachability, credentials and precedence', () => {
  let plain: FakeServer;
  before(async () => {
    plain = await startFakeServer();
    plain.routes.set('GET /status', { status: 200, body: OK_DOC });
  });
  after(async () => plain.close());

  it('refuses a credential over plain http to a non-loopback host with exit 2, before connecting', async () => {
    // Linux routes a connection to 0.0.0.0 to the local host, so the fake server on 127.0.0.1 would
    // see any attempt; for the client 0.0.0.0 is not a loopback address, so the token is withheld.
    const url = `http://0.0.0.0:${plain.port}`;
    const before = plain.connections();
    const run = await runSvc(['status', '--server', url, '--token', 'svck_a_b', '-o', 'json']);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(jsonOut(run).error.code, 'cleartext_refused');
    const fromEnv = await runSvc(['status', '--server', url], { env: { SERVICE_TOKEN: 'svck_a_b' } });
    assert.equal(fromEnv.code, 2);
    assert.match(fromEnv.stderr, /^svc: cleartext_refused: .*--allow-cleartext/);
    assert.equal(plain.connections(), before, 'no connection was opened');
    // With --allow-cleartext the same request goes through.
    plain.seen.length = 0;
    const allowed = await runSvc(['status', '--server', url, '--token', 'svck_a_b', '--allow-cleartext']);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(plain.seen[0]?.headers.authorization, 'Bearer svck_a_b');
  });

  it('allows plain http with a token on loopback', async () => {
    const run = await runSvc(['status', '--server', plain.url, '--token', 'svck_a_b']);
    assert.equal(run.code, 0, run.stderr);
  });

  it('gives up after --timeout with exit 6 (timeout)', async () => {
    plain.routes.set('GET /status', { status: 200, body: OK_DOC, delayMs: 5_000 });
    try {
      const run = await runSvc(['status', '--server', plain.url, '--timeout', '300ms', '-o', 'json']);
      assert.equal(run.code, 6);
      assert.equal(jsonOut(run).error.code, 'timeout');
      assert.match(jsonOut(run).error.message, /within 300 ms/);
    } finally {
      plain.routes.set('GET /status', { status: 200, body: OK_DOC });
    }
  });

  it('exits 6 when nothing listens', async () => {
    const run = await runSvc(['status', '--server', 'https://127.0.0.1:1', '-o', 'json']);
    assert.equal(run.code, 6);
    assert.equal(jsonOut(run).error.code, 'unreachable');
  });

  it('reads the token from stdin with --token-file -', async () => {
    plain.seen.length = 0;
    const run = await runSvc(['status', '--server', plain.url, '--token-file', '-'], { stdin: 'svck_from_stdin\n' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(plain.seen[0]?.headers.authorization, 'Bearer svck_from_stdin');
  });

  it('resolves each value flag > SERVICE_* env > saved context', async () => {
    const config = join(tempDir(), 'config.yaml');
    const write = (contexts: object, mode = 0o600): void => {
      writeFileSync(config, stringify({ 'current-context': 'main', contexts }), { mode });
      chmodSync(config, mode);
    };
    const tenantSeen = async (args: string[], env: Record<string, string>): Promise<unknown> => {
      plain.seen.length = 0;
      const run = await runSvc(['status', ...args], { env: { SERVICE_CONFIG: config, ...env } });
      assert.equal(run.code, 0, run.stderr);
      return plain.seen[0]?.headers['x-service-tenant'];
    };
    // The context's server is dead: reaching the live one proves env beat the context.
    write({ main: { server: 'http://127.0.0.1:1', tenant: 'ctx-tenant', token: 'ctx-token' } });
    const env = { SERVICE_SERVER_URL: plain.url, SERVICE_TENANT: 'env-tenant' };
    assert.equal(await tenantSeen(['--tenant', 'flag-tenant'], env), 'flag-tenant');
    assert.equal(await tenantSeen([], env), 'env-tenant');
    assert.equal(plain.seen[0]?.headers.authorization, 'Bearer ctx-token', 'token still comes from the context');
    write({ main: { server: plain.url, tenant: 'ctx-tenant' }, other: { server: plain.url, tenant: 'other-tenant' } });
    assert.equal(await tenantSeen([], {}), 'ctx-tenant');
    assert.equal(await tenantSeen(['--context', 'other'], {}), 'other-tenant');
    assert.equal(await tenantSeen([], { SERVICE_CONTEXT: 'other' }), 'other-tenant');
    // A group/world-readable file is refused, naming the fix.
    write({ main: { server: plain.url } }, 0o644);
    const refused = await runSvc(['status'], { env: { SERVICE_CONFIG: config } });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^svc: insecure_config: .*chmod 600/);
  });
});
