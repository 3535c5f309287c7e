/**
 * The OPA engine against a small real HTTP server on 127.0.0.1 that speaks OPA's REST Data API
 * shape (POST /v1/data/<path> {input} → {result}). No OPA binary runs on these machines, so Rego
 * itself is not exercised here (docs/policy.md says so).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpaPdp } from '../../src/auth/pdp-opa.js';
import type { PdpInput } from '../../src/auth/pdp.js';

type Handler = (body: { input: PdpInput }, req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_b, _q, res) => res.end('{}');
const seen: Array<{ path: string; body: unknown; type: string | undefined }> = [];

const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (d: Buffer) => (raw += d.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as { input: PdpInput };
    seen.push({ path: req.url ?? '', body, type: req.headers['content-type'] });
    res.setHeader('content-type', 'application/json');
    handler(body, req, res);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));

const warnings: string[] = [];
const log = { warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
const input: PdpInput = {
  principal: { id: 'user:u-1', kind: 'user', userId: 'u-1', superadmin: false, role: 'admin', aal: 1 },
  action: 'agent:write',
  resource: { kind: 'agent', id: 'a-1', tenant: 't-1' },
  context: { method: 'POST', route: '/v1/agents', remoteAddress: '127.0.0.1', requestId: 'r-1' },
};
const pdp = (timeoutMs = 2000) => createOpaPdp({ url: `http://127.0.0.1:${port}/v1/data/svc/authz/allow`, timeoutMs }, log);

test('opa: posts {input} to the decision path and honours a boolean result', async () => {
  handler = (body, _req, res) =>
    res.end(JSON.stringify({ result: body.input.resource.tenant === 't-1' && body.input.action === 'agent:write' }));
  seen.length = 0;
  assert.equal(await pdp().decide(input), 'allow');
  assert.equal(seen[0]?.path, '/v1/data/svc/authz/allow');
  assert.equal(seen[0]?.type, 'application/json');
  assert.deepEqual(seen[0]?.body, { input });
  assert.equal(await pdp().decide({ ...input, resource: { kind: 'agent', tenant: 't-2' } }), 'deny');
});

test('opa: an object result with allow is honoured', async () => {
  handler = (body, _req, res) => res.end(JSON.stringify({ result: { allow: body.input.principal.role === 'admin', reasons: [] } }));
  assert.equal(await pdp().decide(input), 'allow');
  assert.equal(await pdp().decide({ ...input, principal: { ...input.principal, id: 'user:u-2', userId: 'u-2', role: 'viewer' } }), 'deny');
});

test('opa: undefined decisions, wrong types, errors and malformed bodies fail closed', async () => {
  const cases: Array<[string, Handler]> = [
    ['undefined document', (_b, _q, res) => res.end('{}')],
    ['string result', (_b, _q, res) => res.end('{"result":"true"}')],
    ['allow not boolean', (_b, _q, res) => res.end('{"result":{"allow":1}}')],
    ['500', (_b, _q, res) => { res.statusCode = 500; res.end('{"result":true}'); }],
    ['400 with true', (_b, _q, res) => { res.statusCode = 400; res.end('{"code":"invalid_parameter","result":true}'); }],
    ['malformed JSON', (_b, _q, res) => res.end('{"result":tru')],
    ['redirect', (_b, _q, res) => { res.statusCode = 307; res.setHeader('location', '/v1/data/other'); res.end(); }],
  ];
  for (const [name, h] of cases) {
    handler = h;
    assert.equal(await pdp().decide(input), 'deny', name);
  }
});

test('opa: a slow engine is cut off at the timeout and denies', async () => {
  handler = (_b, _q, res) => void setTimeout(() => res.end('{"result":true}'), 1500);
  warnings.length = 0;
  const started = Date.now();
  assert.equal(await pdp(200).decide(input), 'deny');
  assert.ok(Date.now() - started < 1200, 'should give up near the 200 ms deadline');
  assert.ok(warnings.some((w) => w.includes('denying')));
});

test('opa: an unreachable engine denies', async () => {
  const closed = createOpaPdp({ url: 'http://127.0.0.1:1/v1/data/svc/allow', timeoutMs: 1000 }, log);
  assert.equal(await closed.decide(input), 'deny');
});
