/**
 * Webhook deliveries verify the receiver's certificate whatever NODE_TLS_REJECT_UNAUTHORIZED says
 * (issue 47 item 10; `svc serve` refuses to start with it, test/serve/egress-config.test.ts, and
 * every client sets verification explicitly as well): with the variable at 0 in this process, a
 * receiver with no trusted CA, a CA bundle that did not sign it, or a certificate for another name
 * gets no delivery; with its CA bundle and name, it does.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { bootstrap } from '../../auth/harness.js';
import { makeCert, type TestCert } from '../../cli/harness.js';
import { createEventingHarness, type EventingHarness } from './harness.js';

describe('webhooks: certificate verification with NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment', () => {
  let ts: TestStore;
  let h: EventingHarness;
  let root: { session: string; tenant: string };
  let cert: TestCert; // SAN localhost, 127.0.0.1
  let other: TestCert;
  let server: https.Server;
  let port: number;
  const got: string[] = [];
  before(async () => {
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    h = await createEventingHarness(ts.store);
    root = await bootstrap(h);
    cert = makeCert();
    other = makeCert();
    server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      got.push(req.url ?? '');
      req.resume().on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
  });
  after(async () => {
    delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await h?.dispose();
    await ts?.dispose();
  });

  const deliver = async (name: string, endpoint: string, extra: Record<string, unknown>) => {
    const c = await h.call('POST', '/v1/m/eventing/subscriptions', {
      token: root.session,
      tenant: root.tenant,
      body: { name, event_types: ['agent.created'], sink_format: 'json', endpoint, ...extra },
    });
    assert.equal(c.status, 201, c.text);
    const id = (c.json() as { id: string }).id;
    const t = await h.call('POST', `/v1/m/eventing/subscriptions/${id}/test`, { token: root.session, tenant: root.tenant });
    return (t.json() as { delivery: { status: string; last_error: string | null } }).delivery;
  };

  it('no CA, a wrong CA and a wrong name are not delivered; the right CA and name are', async () => {
    const name = hostname();
    const addrs = await lookup(name, { all: true }).catch(() => []);
    const wrongName = addrs.length > 0 && addrs.every((a) => a.address.startsWith('127.'));
    const noCa = await deliver('no-ca', `https://127.0.0.1:${port}/no-ca`, {});
    assert.equal(noCa.status, 'failed', String(noCa.last_error));
    assert.match(String(noCa.last_error), /certificate/i);
    const wrongCa = await deliver('wrong-ca', `https://127.0.0.1:${port}/wrong-ca`, { ca_pem: other.certPem });
    assert.equal(wrongCa.status, 'failed', String(wrongCa.last_error));
    if (wrongName) {
      // this machine's name resolves to 127.0.0.1 (allowed by the development flag) but is not in the certificate
      const d = await deliver('wrong-name', `https://${name}:${port}/wrong-name`, { ca_pem: cert.certPem });
      assert.equal(d.status, 'failed', String(d.last_error));
      assert.match(String(d.last_error), /altname|Hostname|certificate/i);
    }
    assert.deepEqual(got, [], 'nothing reached the receiver');
    const right = await deliver('right', `https://localhost:${port}/right`, { ca_pem: cert.certPem });
    assert.equal(right.status, 'delivered', String(right.last_error));
    assert.deepEqual(got, ['/right']);
  });
});
