import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ApiError, CliError, TransportError } from '../../../src/cli/client/errors.js';
import { apiErrorFrom, HttpClient } from '../../../src/cli/client/http-client.js';
import { parseServerUrl } from '../../../src/cli/client/settings.js';
import type { ClientSettings } from '../../../src/cli/client/settings.js';
import { makeCert, startFakeServer } from '../harness.js';
import type { FakeServer, TestCert } from '../harness.js';

const sink = (): { stream: Writable; text: () => string } => {
  const chunks: Buffer[] = [];
  return {
    stream: new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    }),
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
};

function settings(server: string, extra: Partial<ClientSettings> = {}): ClientSettings {
  return {
    server: parseServerUrl(server),
    tenant: undefined,
    token: undefined,
    caCertPem: undefined,
    pins: [],
    insecure: false,
    allowCleartext: false,
    timeoutMs: 5_000,
    sources: { server: 'flag' },
    ...extra,
  };
}

const quiet = { stderr: sink().stream, userAgent: 'svc/test' };

describe('HttpClient', () => {
  let cert: TestCert;
  let server: FakeServer;
  before(async () => {
    cert = makeCert();
    server = await startFakeServer(cert);
  });
  after(async () => server.close());

  it('refuses a credential over cleartext to a non-loopback host at construction, before any I/O', () => {
    assert.throws(
      () => new HttpClient(settings('http://192.0.2.10', { token: 't' }), quiet),
      (err: unknown) => err instanceof CliError && err.exitCode === 2 && err.code === 'cleartext_refused',
    );
    // Allowed: no token, loopback, or --allow-cleartext (constructing opens no connection).
    for (const ok of [
      settings('http://192.0.2.10'),
      settings('http://127.0.0.1:1', { token: 't' }),
      settings('http://192.0.2.10', { token: 't', allowCleartext: true }),
    ]) {
      void new HttpClient(ok, quiet).close();
    }
  });

  it('streams a download into a writable, and maps a non-2xx download to ApiError', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ seq: i + 1, pad: 'x'.repeat(40) })).join('\n');
    server.routes.set('GET /v1/audit/export?format=json', { status: 200, body: `${lines}\n`, contentType: 'application/x-ndjson' });
    server.routes.set('GET /v1/audit/export?format=bad', {
      status: 400,
      body: { error: { code: 'bad_request', message: 'unknown format' } },
    });
    const client = new HttpClient(settings(server.url, { pins: [Buffer.from(cert.pinHex, 'hex')] }), quiet);
    try {
      const out = sink();
      const response = await client.download('/v1/audit/export', out.stream, { query: { format: 'json' } });
      assert.equal(response.status, 200);
      assert.equal(out.text(), `${lines}\n`);
      await assert.rejects(client.download('/v1/audit/export', sink().stream, { query: { format: 'bad' } }), (err: unknown) => {
        return err instanceof ApiError && err.status === 400 && err.code === 'bad_request' && err.exitCode === 1;
      });
    } finally {
      await client.close();
    }
  });

  it('raises TransportError tls_pin_mismatch in-process for a wrong pin', async () => {
    const client = new HttpClient(settings(server.url, { pins: [Buffer.alloc(32)] }), quiet);
    try {
      await assert.rejects(
        client.get('/status'),
        (err: unknown) => err instanceof TransportError && err.failure === 'tls_pin_mismatch' && err.exitCode === 6,
      );
    } finally {
      await client.close();
    }
  });

  it('builds ApiError from the envelope, or from the status when there is none', () => {
    const withEnvelope = apiErrorFrom(404, { error: { code: 'not_found', message: 'no agent' } });
    assert.deepEqual([withEnvelope.code, withEnvelope.message, withEnvelope.exitCode], ['not_found', 'no agent', 4]);
    const bare = apiErrorFrom(502, '<html>Bad Gateway</html>');
    assert.deepEqual([bare.code, bare.exitCode], ['http_502', 6]);
    assert.match(bare.message, /HTTP 502: <html>Bad Gateway/);
  });
});
