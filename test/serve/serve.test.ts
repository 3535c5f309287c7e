/** `svc serve` as a user runs it: real binary, real HTTPS on loopback, real SQLite, real tools. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { connect } from 'node:tls';
import { request } from 'undici';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startServer, runServeExpectingExit, call, SVC_BIN, tempDir, type TestServer } from '../helpers/server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  if (server) await server.stop();
});

function curl(args: string[]): { code: number; out: string } {
  const r = spawnSync('curl', ['-sS', '--max-time', '10', ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}

test('serve: curl reaches /healthz trusting the generated certificate (--cacert) or its pin (--pinnedpubkey)', () => {
  const certFile = path.join(server.dataDir, 'tls', 'cert.pem');
  const byCa = curl(['--cacert', certFile, `https://localhost:${server.port}/healthz`]);
  assert.equal(byCa.code, 0, byCa.out);
  assert.equal(byCa.out, '{"status":"ok"}');
  const byPin = curl(['-k', '--pinnedpubkey', `sha256//${server.pinSha256}`, `https://127.0.0.1:${server.port}/healthz`]);
  assert.equal(byPin.code, 0, byPin.out);
  const wrongPin = curl([
    '-k',
    '--pinnedpubkey',
    'sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    `https://127.0.0.1:${server.port}/healthz`,
  ]);
  assert.notEqual(wrongPin.code, 0, 'a wrong pin is refused');
  const untrusted = curl([`https://127.0.0.1:${server.port}/healthz`]);
  assert.notEqual(untrusted.code, 0, 'an untrusted self-signed certificate is refused');
});

test('serve: the logged fingerprint and pin match openssl on the served certificate, and differ', () => {
  // Take the certificate off the wire, not from the file, so we check what clients actually see.
  const served = execFileSync(
    'sh',
    ['-c', `openssl s_client -connect 127.0.0.1:${server.port} -servername localhost </dev/null 2>/dev/null | openssl x509`],
    { encoding: 'utf8' },
  );
  const fp = execFileSync('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], { input: served, encoding: 'utf8' })
    .trim()
    .split('=')[1];
  assert.equal(server.fingerprintSha256, fp);
  const pin = execFileSync(
    'sh',
    ['-c', 'openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64'],
    { input: served, encoding: 'utf8' },
  ).trim();
  assert.equal(server.pinSha256, pin);
  assert.notEqual(Buffer.from(fp!.replace(/:/g, ''), 'hex').toString('base64'), pin, 'fingerprint and pin are different digests');
  const keyType = execFileSync('openssl', ['x509', '-noout', '-text'], { input: served, encoding: 'utf8' });
  assert.match(keyType, /ASN1 OID: prime256v1/);
  assert.match(keyType, /DNS:localhost/);
  assert.match(keyType, /IP Address:127\.0\.0\.1/);
  assert.match(keyType, /IP Address:0:0:0:0:0:0:0:1/);
});

test(
  'serve: the SQLite page cache it runs with is logged at startup (2048 MiB unless SERVICE_SQLITE_CACHE_MIB says otherwise)',
  async () => {
    assert.equal(server.logs().find((l) => l.msg === 'store opened')?.cache_mib, 2048);
    const small = await startServer({ env: { SERVICE_SQLITE_CACHE_MIB: '96' } });
    try {
      assert.equal(small.logs().find((l) => l.msg === 'store opened')?.cache_mib, 96);
      assert.equal((await call(small, 'GET', '/healthz')).status, 200);
    } finally {
      await small.stop();
    }
  },
);

test('serve: the HTTP engine is reported in the log, /v1/server-info and /metrics', async () => {
  const line = server.logs().find((l) => l.msg === 'http listening');
  assert.equal(line?.engine, 'uws-native');
  const info = await call(server, 'GET', '/v1/server-info');
  assert.equal(info.status, 200);
  assert.deepEqual(info.json(), {
    version: 'dev',
    api_version: 'v1',
    engine: { http: 'uws-native', store: 'sqlite', crypto: 'libsodium' },
    setup_required: true,
    tls: true,
  });
  const metrics = await call(server, 'GET', '/metrics');
  assert.match(metrics.text, /^svc_http_engine_info\{engine="uws-native"\} 1$/m);
  assert.match(metrics.text, /^svc_crypto_engine_info\{engine="libsodium"\} 1$/m);
});

test('serve: /metrics is valid Prometheus text (promtool) with request counts, latency and process metrics', async (t) => {
  await call(server, 'GET', '/healthz');
  await call(server, 'GET', '/nope');
  // uWS drops a connection with a non-standard method before our handler; either way no label leaks.
  await call(server, 'BREW', '/nope').catch(() => undefined);
  const res = await call(server, 'GET', '/metrics');
  assert.doesNotMatch(res.text, /method="BREW"/, 'client-chosen methods do not become label values');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  assert.match(res.text, /svc_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  assert.match(res.text, /svc_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
  assert.match(res.text, /svc_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz",status="200"\}/);
  assert.match(res.text, /^svc_http_requests_in_flight \d+/m);
  assert.match(res.text, /^svc_process_resident_memory_bytes \d+/m);
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: res.text, encoding: 'utf8' });
  if (promtool.error) {
    if (process.env.SVC_TEST_REQUIRE_TOOLS) assert.fail('promtool is required (Debian package prometheus)');
    return t.skip('promtool not installed (Debian package prometheus)');
  }
  assert.equal(promtool.status, 0, `promtool check metrics: ${promtool.stdout}${promtool.stderr}`);
});

test('serve: health endpoints answer without setup; readiness reports the store', async () => {
  for (const p of ['/healthz', '/livez']) assert.deepEqual((await call(server, 'GET', p)).json(), { status: 'ok' });
  for (const p of ['/readyz', '/pod-readyz']) {
    const r = await call(server, 'GET', p);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), {
      status: 'ready',
      checks: { store: { ok: true, backend: 'sqlite', migrations: r.json().checks.store.migrations } },
    });
    assert.equal(r.json().checks.store.migrations.current, r.json().checks.store.migrations.expected);
  }
  const status = (await call(server, 'GET', '/status')).json();
  assert.equal(status.status, 'ok');
  assert.deepEqual(status.components, {
    http: { status: 'ok', engine: 'uws-native' },
    store: { status: 'ok', backend: 'sqlite' },
    grpc: { status: 'ok' },
    connectors: { status: 'ok', failed: 0 },
  });
});

test('serve: bad input over the wire gets the envelope, and the server stays healthy', async () => {
  const expectEnvelope = (r: { status: number; json: () => any; headers: Record<string, unknown> }, status: number, code: string) => {
    assert.equal(r.status, status);
    assert.equal(r.json().error.code, code);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.ok(r.headers['x-request-id']);
  };
  expectEnvelope(await call(server, 'GET', '/v1/does-not-exist'), 404, 'not_found');
  expectEnvelope(await call(server, 'DELETE', '/healthz'), 405, 'method_not_allowed');
  expectEnvelope(
    await call(server, 'POST', '/healthz', { body: Buffer.alloc(2 * 1024 * 1024, 'a'), headers: { 'content-type': 'application/json' } }),
    413,
    'request_body_too_large',
  );
  expectEnvelope(await call(server, 'GET', '/healthz?verbose=1'), 400, 'bad_request');
  expectEnvelope(await call(server, 'GET', '/v1/%ZZ'), 404, 'not_found');
  expectEnvelope(await call(server, 'GET', `/${'a'.repeat(9000)}`), 400, 'bad_request');
  const unicode = await call(server, 'GET', '/v1/agents/%F0%9F%98%80');
  assert.ok([404, 409].includes(unicode.status), `unicode path answered ${unicode.status}`);
  const echoed = await call(server, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-42' } });
  assert.equal(echoed.headers['x-request-id'], 'trace-42');
  assert.equal((await call(server, 'GET', '/healthz')).status, 200);
});

test('serve: an oversized body gets its 413 envelope, not a broken pipe; past 8 MiB declared it is refused before the body', async () => {
  // Closing while the client still wrote its body made about 2% of these fail with EPIPE before
  // the client read the answer; the server now drops the body and answers when it is sent.
  const big = Buffer.alloc(2 * 1024 * 1024, 'a');
  const answers = new Map<string, number>();
  for (let i = 0; i < 100; i++) {
    const r = await call(server, 'POST', '/healthz', { body: big, headers: { 'content-type': 'application/json' } }).then(
      (x) => `${x.status} ${x.json().error.code}`,
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    );
    answers.set(r, (answers.get(r) ?? 0) + 1);
  }
  assert.deepEqual([...answers], [['413 request_body_too_large', 100]]);

  // No content-length (chunked): counted as it arrives, refused the same way.
  const chunked = Readable.from(Array.from({ length: 4 }, () => Buffer.alloc(512 * 1024, 'b')));
  const streamed = await request(`${server.url}/healthz`, {
    method: 'POST',
    body: chunked,
    headers: { 'content-type': 'application/json' },
    dispatcher: server.dispatcher,
  });
  assert.equal(streamed.statusCode, 413);
  assert.equal(((await streamed.body.json()) as { error: { code: string } }).error.code, 'request_body_too_large');

  // Headers alone, no body sent: answered at once when the declared size is past 8 MiB.
  const headersOnly = (extra: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: server.port, ca: server.certPem, checkServerIdentity: () => undefined }, () => {
        socket.write(`POST /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${extra}\r\n`);
      });
      let text = '';
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(`no answer within 3 s: ${JSON.stringify(text)}`);
      }, 3000);
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (text.includes('\r\n\r\n') && text.includes('}')) {
          clearTimeout(timer);
          socket.destroy();
          resolve(text.split('\r\n')[0] as string);
        }
      });
      socket.on('error', reject);
    });
  assert.equal(await headersOnly('content-length: 104857600\r\n'), 'HTTP/1.1 413 Payload Too Large');
  assert.equal((await call(server, 'GET', '/healthz')).status, 200, 'the server stays healthy');
});

test('serve: a client that goes away while sending its body is logged (499, aborted) and leaves the in-flight count', async () => {
  const inFlight = async () => Number(/^svc_http_requests_in_flight (\d+)/m.exec((await call(server, 'GET', '/metrics')).text)?.[1]);
  const before = await inFlight();
  const requestId = `gone-${Date.now()}`;
  for (const [declared, sent] of [
    [1000, 10], // within the limit: the body was being read
    [2 * 1024 * 1024, 10], // past the limit: the body was being dropped before the 413
  ] as const) {
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: server.port, ca: server.certPem, checkServerIdentity: () => undefined }, () => {
        socket.write(
          `POST /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ` +
            `${declared}\r\nx-request-id: ${requestId}-${declared}\r\n\r\n${'x'.repeat(sent)}`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
      socket.on('error', reject);
    });
  }
  const deadline = Date.now() + 5000;
  while ((await inFlight()) !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await inFlight(), before, 'both aborted uploads left the in-flight gauge');
  const lineOf = (declared: number) => server.logs().find((l) => l.msg === 'request' && l.request_id === `${requestId}-${declared}`);
  // The access log reaches us through the child's stdout, a little after the gauge moves.
  while (!(lineOf(1000) && lineOf(2 * 1024 * 1024)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const declared of [1000, 2 * 1024 * 1024]) {
    const line = lineOf(declared);
    assert.ok(line, `an access-log line for the upload of ${declared} bytes`);
    assert.equal(line.status, 499);
    assert.equal(line.aborted, true);
  }
});

test('serve: /openapi.json and /openapi.beta.json pass two third-party OpenAPI 3.1 validators and equal `svc openapi`', async () => {
  for (const [p, flag] of [['/openapi.json', []], ['/openapi.beta.json', ['--beta']]] as const) {
    const served = (await call(server, 'GET', p)).json();
    assert.equal(served.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(served));
    const result = await new Validator().validate(structuredClone(served));
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    // Not execFileSync: a blocked event loop keeps undici from seeing the server close an idle
    // keep-alive socket (uWS, 10 s), and the next call would reuse the dead socket.
    const printed = JSON.parse((await promisify(execFile)(process.execPath, [SVC_BIN, 'openapi', ...flag], { encoding: 'utf8' })).stdout);
    assert.deepEqual(printed, served, `svc openapi ${flag.join(' ')} prints the served document`);
  }
  const stable = (await call(server, 'GET', '/openapi.json')).json();
  for (const p of Object.keys(stable.paths)) assert.ok(!p.startsWith('/v1/m/'), `${p} is a module route in the stable document`);
  assert.ok(!('/openapi.beta.json' in stable.paths), 'the beta document is not one of the 53 core paths');
  const beta = (await call(server, 'GET', '/openapi.beta.json')).json();
  for (const [p, item] of Object.entries(beta.paths as Record<string, Record<string, any>>)) {
    assert.ok(p.startsWith('/v1/m/'), p);
    for (const op of Object.values(item)) assert.equal(op['x-stability'], 'beta');
  }
});

test(
  'serve: refusals — --seed-demo on a non-loopback bind, plaintext gRPC without --insecure, --insecure off loopback, a page cache size ' +
    'out of range',
  async () => {
    const dir = tempDir();
    try {
      const demo = await runServeExpectingExit(['--data-dir', dir, '--listen', '0.0.0.0:8443', '--seed-demo']);
      assert.equal(demo.code, 2);
      assert.match(demo.stderr, /refusing to start: --seed-demo .* loopback .* --listen is 0\.0\.0\.0:8443/);
      const grpcPlain = await runServeExpectingExit(['--data-dir', dir, '--listen', '127.0.0.1:0', '--grpc-listen', 'grpc://127.0.0.1:0']);
      assert.equal(grpcPlain.code, 2);
      assert.match(grpcPlain.stderr, /gRPC server refuses to start in plaintext/);
      const insecure = await runServeExpectingExit(['--data-dir', dir, '--insecure', '--listen', '0.0.0.0:0']);
      assert.equal(insecure.code, 2);
      assert.match(insecure.stderr, /--insecure serves plaintext and is only allowed on loopback/);
      const cache = await runServeExpectingExit(['--data-dir', dir, '--listen', '127.0.0.1:0'], { SERVICE_SQLITE_CACHE_MIB: '2g' });
      assert.equal(cache.code, 2);
      assert.match(cache.stderr, /SERVICE_SQLITE_CACHE_MIB must be an integer from 16 to 65536 \(MiB\), got "2g"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('serve: a port already in use fails startup with exit 1 and a clear log line', async () => {
  const dir = tempDir();
  try {
    const r = await runServeExpectingExit(['--data-dir', dir, '--listen', `127.0.0.1:${server.port}`, '--grpc-listen', '127.0.0.1:0']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot listen on 127\.0\.0\.1:\d+/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('serve: --insecure on loopback serves plain HTTP without HSTS; SIGTERM drains and exits 0', async () => {
  const plain = await startServer({ insecure: true });
  try {
    assert.match(plain.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const r = await call(plain, 'GET', '/healthz');
    assert.equal(r.status, 200);
    assert.equal(r.headers['strict-transport-security'], undefined);
    assert.ok(plain.logs().some((l) => l.level === 'warn' && /--insecure/.test(l.msg)));
  } finally {
    assert.equal(await plain.stop('SIGTERM'), 0);
  }
  assert.ok(plain.logs().some((l) => l.msg === 'stopped'), 'shutdown is logged');
});

test('serve: the certificate is generated once and reused on the next start', async () => {
  const dir = tempDir();
  try {
    const first = await startServer({ dataDir: dir });
    const fp = first.fingerprintSha256;
    assert.equal(first.logs().find((l) => l.msg === 'tls certificate')?.action, 'created');
    await first.stop();
    const second = await startServer({ dataDir: dir });
    assert.equal(second.fingerprintSha256, fp);
    assert.equal(second.logs().find((l) => l.msg === 'tls certificate')?.action, 'reused');
    await second.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('serve: nothing secret and no default credential in the logs', () => {
  const text = server.logs().map((l) => JSON.stringify(l)).join('\n');
  assert.doesNotMatch(text, /BEGIN (EC )?PRIVATE KEY/);
  assert.doesNotMatch(text, /svcst_|svcs_|svck_/);
  assert.doesNotMatch(text, /password/i);
  writeFileSync(path.join(server.dataDir, 'probe'), 'x');
});
