/**
 * Issue 30 item 11: a client that stops sending its request body gets `408 request_timeout` with
 * the error envelope once `SERVICE_BODY_TIMEOUT_MS` has passed without a byte (before uWS's own
 * idle cut of about 10–14 s would close the socket without an answer), and the access log records
 * a 408, not `499 aborted`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer({ insecure: true, env: { SERVICE_BODY_TIMEOUT_MS: '1000' } });
});
after(async () => {
  await server?.stop();
});

/** Sends the headers and the first bytes of a body, then nothing; resolves with what the server wrote before it closed. */
function stallBody(path: string, declared: number, sent: string, waitMs: number): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port: server.port });
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, ms: Date.now() - started });
    }, waitMs);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ms: Date.now() - started });
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\nx-request-id: ` +
        `slow-body-1\r\n\r\n${sent}`,
    );
  });
}

test('a stalled body is answered 408 request_timeout with the envelope, and logged as 408', async () => {
  const res = await stallBody('/v1/auth/login', 200, '{"email":"a@b.c",', 8000);
  assert.match(res.text, /^HTTP\/1\.1 408 /, `got after ${res.ms} ms: ${JSON.stringify(res.text)}`);
  assert.ok(res.ms < 5000, `answered after ${res.ms} ms`);
  const body = JSON.parse(res.text.slice(res.text.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'request_timeout');
  assert.match(body.error.message, /body/);
  // The access-log line follows the answer.
  for (let i = 0; i < 50 && !server.logs().some((l) => l.request_id === 'slow-body-1'); i++) await new Promise((r) => setTimeout(r, 20));
  const line = server.logs().find((l) => l.request_id === 'slow-body-1' && l.msg === 'request');
  assert.ok(line, 'an access-log line');
  assert.equal(line.status, 408);
  assert.equal(line.route, '/v1/auth/login');
  assert.equal(line.aborted, undefined);
});

test('a body that keeps arriving is not cut by the idle timer', async () => {
  const res = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.port });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', reject);
    socket.on('end', () => resolve(text));
    const body = '{"email":"nobody@example.test","password":"not the password at all"}';
    socket.write(
      `POST /v1/auth/login HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ` +
        `${body.length}\r\nconnection: close\r\n\r\n`,
    );
    // 3 pieces 600 ms apart: 1.8 s in all, longer than the 1 s idle limit, never silent that long.
    const pieces = [body.slice(0, 20), body.slice(20, 40), body.slice(40)];
    pieces.forEach((p, i) => setTimeout(() => socket.write(p), 600 * (i + 1)));
  });
  assert.match(res, /^HTTP\/1\.1 (401|409) /, res);
});
