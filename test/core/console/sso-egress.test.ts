/**
 * SSO discovery goes through the egress guard (issue 47 item 9): a server started without the
 * development flag, configured with an issuer on loopback, neither fetches its discovery document
 * for a login nor for the provider test; both answers name `egress_refused`, and the issuer sees
 * no request. (With the flag, the SSO tests log in through a loopback provider: sso-token-checks.)
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { call, setupAndLogin, startServer, type TestServer } from '../../helpers/server.js';

let server: TestServer;
let issuer: Server;
let requests = 0;

before(async () => {
  issuer = createServer((_req, res) => {
    requests++;
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => issuer.listen(0, '127.0.0.1', () => r()));
  server = await startServer({ env: { SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: '' } });
});
after(async () => {
  await server?.stop();
  issuer?.closeAllConnections();
  await new Promise<void>((r) => (issuer ? issuer.close(() => r()) : r()));
});

test('an issuer on loopback is refused by the guard for a login and for the provider test; it sees no request', async () => {
  const { token } = await setupAndLogin(server, { email: 'root@example.test', password: 'correct horse battery staple' });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const port = (issuer.address() as AddressInfo).port;
  const put = await call(server, 'PUT', '/v1/console/sso', {
    headers,
    body: JSON.stringify({ issuer: `http://127.0.0.1:${port}`, client_id: 'svc-console' }),
  });
  assert.equal(put.status, 200, put.text);
  const start = await call(server, 'POST', '/v1/m/identity/sso/start', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uri: 'http://127.0.0.1:1/callback' }),
  });
  assert.equal(start.status, 503, start.text);
  assert.match(start.json().error.message, /egress_refused: egress refused: 127\.0\.0\.1 is a loopback address/);
  const tested = await call(server, 'POST', '/v1/console/sso/test', { headers: { authorization: `Bearer ${token}` } });
  assert.equal(tested.status, 200, tested.text);
  const steps = tested.json().steps as Array<{ step: string; ok: boolean; detail: string }>;
  const discovery = steps.find((s) => s.step === 'discovery');
  assert.equal(discovery?.ok, false, tested.text);
  assert.match(String(discovery?.detail), /egress refused: 127\.0\.0\.1 is a loopback address/);
  assert.equal(requests, 0, 'the issuer saw no request');
});
