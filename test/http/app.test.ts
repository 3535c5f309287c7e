import { test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { App } from '../../src/http/app.js';
import { ApiError } from '../../src/contract/errors.js';
import { PUBLIC, route, type AnyRoute } from '../../src/contract/route.js';
import { reply } from '../../src/http/reply.js';
import type { Services } from '../../src/serve/services.js';

/** A logger whose lines the test can read. */
function memoryLog() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

const Item = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 64 }), size: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

const routes: AnyRoute[] = [
  route({
    method: 'GET',
    path: '/open',
    stability: 'stable',
    operationId: 'open',
    summary: 'open',
    permission: PUBLIC,
    setupExempt: true,
    handler: () => ({ ok: true }),
  }),
  route({
    method: 'GET',
    path: '/gated',
    stability: 'stable',
    operationId: 'gated',
    summary: 'gated',
    permission: PUBLIC,
    handler: () => ({ ok: true }),
  }),
  route({
    method: 'GET',
    path: '/private',
    stability: 'stable',
    operationId: 'private',
    summary: 'private',
    permission: 'agent:read',
    setupExempt: true,
    handler: () => ({ secret: 1 }),
  }),
  route({
    method: 'POST',
    path: '/items/{id}',
    stability: 'stable',
    operationId: 'createItem',
    summary: 'create',
    unaudited: 'a test route that stores nothing',
    permission: PUBLIC,
    setupExempt: true,
    params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
    query: Type.Object({ dry: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    body: Item,
    status: 201,
    response: Type.Object({ id: Type.Integer(), name: Type.String(), dry: Type.Boolean() }, { additionalProperties: false }),
    handler: (ctx) => ({ id: ctx.params.id, name: ctx.body.name, dry: ctx.query.dry ?? false }),
  }),
  route({
    method: 'GET',
    path: '/boom',
    stability: 'stable',
    operationId: 'boom',
    summary: 'boom',
    permission: PUBLIC,
    setupExempt: true,
    handler: () => {
      throw new Error('secret database detail');
    },
  }),
  route({
    method: 'GET',
    path: '/conflict',
    stability: 'stable',
    operationId: 'conflict',
    summary: 'c',
    permission: PUBLIC,
    setupExempt: true,
    handler: () => {
      throw new ApiError('rate_limited', 'slow down', { 'retry-after': '7' });
    },
  }),
  route({
    method: 'GET',
    path: '/slow',
    stability: 'stable',
    operationId: 'slow',
    summary: 's',
    permission: PUBLIC,
    setupExempt: true,
    timeoutMs: 50,
    handler: (ctx) =>
      new Promise((resolve) => {
        const t = setTimeout(() => resolve({ late: true }), 5_000);
        ctx.signal.addEventListener('abort', () => clearTimeout(t));
      }),
  }),
  route({
    method: 'GET',
    path: '/bad-response',
    stability: 'stable',
    operationId: 'badResponse',
    summary: 'b',
    permission: PUBLIC,
    setupExempt: true,
    response: Type.Object({ n: Type.Integer() }),
    handler: () => JSON.parse('{"n":"not a number"}'),
  }),
  route({
    method: 'GET',
    path: '/stream',
    stability: 'stable',
    operationId: 'stream',
    summary: 's',
    permission: PUBLIC,
    setupExempt: true,
    handler: () =>
      reply.stream(
        (async function* () {
          yield 'a\n';
          yield Buffer.from('b\n');
        })(),
        'application/x-ndjson',
      ),
  }),
];

function makeApp(opts: { setupRequired?: boolean; tls?: boolean } = {}) {
  const { log, lines } = memoryLog();
  const app = new App({
    routes,
    services: {} as Services,
    log,
    tls: opts.tls ?? true,
    bodyLimit: 1024,
    timeoutMs: 1000,
    setupRequired: () => opts.setupRequired ?? false,
    validateResponses: true,
  });
  return { app, lines };
}

function assertEnvelope(res: { status: number; headers: Record<string, string>; json: () => unknown }, status: number, code: string) {
  assert.equal(res.status, status);
  assert.equal(res.headers['content-type'], 'application/json');
  const body = res.json() as { error: { code: string; message: string } };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  return body.error.message;
}

test('app: a valid request is coerced from strings (params, query) and answered with the route status', async () => {
  const { app } = makeApp();
  const res = await app.request('POST', '/items/7?dry=true', { body: { name: 'ünï 😀', size: 3 } });
  assert.equal(res.status, 201);
  assert.deepEqual(res.json(), { id: 7, name: 'ünï 😀', dry: true });
  // A surrogate pair written as escapes is one character, not a lone surrogate.
  const escaped = await app.request('POST', '/items/8', { body: '{"name":"\\ud83d\\ude00","size":1}' });
  assert.deepEqual([escaped.status, escaped.json()], [201, { id: 8, name: '😀', dry: false }]);
});

test('app: unknown route 404, wrong method 405 with Allow, both as the envelope', async () => {
  const { app } = makeApp();
  assertEnvelope(await app.request('GET', '/nope'), 404, 'not_found');
  const res = await app.request('DELETE', '/items/1');
  assertEnvelope(res, 405, 'method_not_allowed');
  assert.equal(res.headers.allow, 'POST');
});

test('app: bad input is a 400 envelope naming the problem, and the handler never runs', async () => {
  const { app } = makeApp();
  const cases: Array<[string, string, unknown, RegExp]> = [
    ['malformed JSON', '/items/1', '{"name": "x", ', /malformed JSON/],
    ['unknown field', '/items/1', { name: 'x', size: 1, admin: true }, /additional properties.*admin/],
    ['wrong type', '/items/1', { name: 'x', size: '1' }, /\/size/],
    ['missing field', '/items/1', { name: 'x' }, /size/],
    ['too long', '/items/1', { name: 'x'.repeat(65), size: 1 }, /\/name/],
    ['array instead of object', '/items/1', [1, 2], /invalid body/],
    ['bad path param', '/items/zero', { name: 'x', size: 1 }, /path parameter/],
    ['path param below minimum', '/items/0', { name: 'x', size: 1 }, /path parameter/],
    ['unknown query parameter', '/items/1?dry=true&admin=1', { name: 'x', size: 1 }, /admin/],
    ['query of wrong type', '/items/1?dry=maybe', { name: 'x', size: 1 }, /invalid query/],
    ['query parameter repeated', '/items/1?dry=true&dry=false', { name: 'x', size: 1 }, /given more than once: dry/],
    ['__proto__ key', '/items/1', '{"name":"x","size":1,"__proto__":{"admin":true}}', /additional properties/],
    ['lone high surrogate', '/items/1', '{"name":"a\\ud800b","size":1}', /\/name holds a lone UTF-16 surrogate/],
    ['lone low surrogate in a key', '/items/1', '{"name":"x","size":1,"\\udc00":1}', /holds a lone UTF-16 surrogate/],
  ];
  for (const [what, path, body, pattern] of cases) {
    const message = assertEnvelope(await app.request('POST', path, { body }), 400, 'bad_request');
    assert.match(message, pattern, what);
  }
  assert.match(assertEnvelope(await app.request('POST', '/items/1'), 400, 'bad_request'), /body required/);
  assert.match(assertEnvelope(await app.request('GET', '/open', { body: { a: 1 } }), 400, 'bad_request'), /takes no request body/);
  assert.match(assertEnvelope(await app.request('GET', '/open?x=1'), 400, 'bad_request'), /unknown query parameter: x/);
});

test('app: invalid UTF-8 and non-JSON media types are refused, not replaced', async () => {
  const { app } = makeApp();
  const invalid = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","size":1}')]);
  assert.match(assertEnvelope(await app.request('POST', '/items/1', { body: invalid }), 400, 'bad_request'), /UTF-8/);
  assertEnvelope(
    await app.request('POST', '/items/1', { body: '{"name":"x","size":1}', headers: { 'content-type': 'text/plain' } }),
    415,
    'unsupported_media_type',
  );
  const ok = await app.request('POST', '/items/1', {
    body: '{"name":"x","size":1}',
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  assert.equal(ok.status, 201);
});

test('app: a 500 says "internal error" only; the detail and the request id go to the log', async () => {
  const { app, lines } = makeApp();
  const res = await app.request('GET', '/boom', { headers: { 'x-request-id': 'req-123' } });
  assert.equal(assertEnvelope(res, 500, 'internal'), 'internal error');
  assert.doesNotMatch(res.text, /secret database detail/);
  assert.equal(res.headers['x-request-id'], 'req-123');
  const logged = lines.find((l) => l.msg === 'unhandled error');
  assert.ok(logged, 'the error is logged');
  assert.equal(logged.request_id, 'req-123');
  assert.match(JSON.stringify(logged.err), /secret database detail/);
});

test('app: ApiError headers (Retry-After) reach the client', async () => {
  const { app } = makeApp();
  const res = await app.request('GET', '/conflict');
  assertEnvelope(res, 429, 'rate_limited');
  assert.equal(res.headers['retry-after'], '7');
});

test('app: the route deadline answers 503 and aborts the handler signal', async () => {
  const { app } = makeApp();
  const started = Date.now();
  const message = assertEnvelope(await app.request('GET', '/slow'), 503, 'unavailable');
  assert.match(message, /timed out after 50 ms/);
  assert.ok(Date.now() - started < 2_000);
});

test('app: a response that violates its schema is caught when validation is on', async () => {
  const { app } = makeApp();
  assertEnvelope(await app.request('GET', '/bad-response'), 500, 'internal');
});

test('app: setup gate answers 409 setup_required except on exempt routes', async () => {
  const { app } = makeApp({ setupRequired: true });
  assertEnvelope(await app.request('GET', '/gated'), 409, 'setup_required');
  assert.equal((await app.request('GET', '/open')).status, 200);
  const open = makeApp({ setupRequired: false });
  assert.equal((await open.app.request('GET', '/gated')).status, 200);
});

test('app: a route with a permission is denied (401) when no authenticator is plugged in', async () => {
  const { app } = makeApp();
  assertEnvelope(await app.request('GET', '/private'), 401, 'unauthenticated');
});

test('app: security headers and request ids on every answer; HSTS only over TLS', async () => {
  const tls = makeApp({ tls: true }).app;
  const plain = makeApp({ tls: false }).app;
  for (const res of [await tls.request('GET', '/open'), await tls.request('GET', '/nope'), await tls.request('GET', '/boom')]) {
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.match(res.headers['content-security-policy'] ?? '', /default-src 'none'/);
    assert.match(res.headers['strict-transport-security'] ?? '', /max-age=\d+/);
    assert.match(res.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
  }
  assert.equal((await plain.request('GET', '/open')).headers['strict-transport-security'], undefined);
  const weird = await tls.request('GET', '/open', { headers: { 'x-request-id': 'bad id with spaces\r\n' } });
  assert.notEqual(weird.headers['x-request-id'], 'bad id with spaces\r\n', 'an unsafe incoming id is replaced');
});

test('app: streamed replies are collected in order', async () => {
  const { app } = makeApp();
  const res = await app.request('GET', '/stream');
  assert.equal(res.text, 'a\nb\n');
  assert.equal(res.headers['content-type'], 'application/x-ndjson');
});
