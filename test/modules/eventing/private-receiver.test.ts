/**
 * Private receivers over HTTPS (certificate and pin made by the openssl CLI, not our code): with
 * the CA bundle a delivery goes through; without it, or with a pin of another key, it does not
 * (and the body never reaches the receiver); with the right pin it does.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap } from '../../auth/harness.js';
import { makeCert, type TestCert } from '../../cli/harness.js';
import { createEventingHarness, verify, waitFor, type EventingHarness } from './harness.js';

for (const b of await testStores()) {
  describe(`${b.backend}: private HTTPS receivers (CA bundle, pin)`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: EventingHarness;
    let root: { session: string; tenant: string };
    let cert: TestCert;
    let other: TestCert;
    let server: https.Server;
    const got: Array<{ path: string; headers: Record<string, unknown>; body: string }> = [];
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createEventingHarness(ts.store);
      root = await bootstrap(h);
      cert = makeCert();
      other = makeCert();
      server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (c: string) => (body += c));
        req.on('end', () => {
          got.push({ path: req.url ?? '', headers: req.headers, body });
          res.writeHead(200).end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    });
    after(async () => {
      server?.closeAllConnections();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      await h?.dispose();
      await ts?.dispose();
    });

    const url = (p: string) => `https://127.0.0.1:${(server.address() as AddressInfo).port}${p}`;
    const test = async (body: Record<string, unknown>) => {
      const sub = (
        await h.call('POST', '/v1/m/eventing/subscriptions', {
          token: root.session,
          body: { event_types: ['agent.created'], sink_format: 'json', ...body },
        })
      ).json();
      const t = (await h.call('POST', `/v1/m/eventing/subscriptions/${sub.id}/test`, { token: root.session })).json();
      return { sub, delivery: t.delivery as { status: string; last_error: string | null } };
    };

    it('the CA bundle lets a delivery through; no CA or a wrong pin does not, and sends nothing', async () => {
      const withCa = await test({ name: 'ca', endpoint: url('/ca'), ca_pem: cert.certPem });
      assert.equal(withCa.delivery.status, 'delivered', String(withCa.delivery.last_error));
      await waitFor(() => got.some((g) => g.path === '/ca'), 5_000, 'the CA delivery');
      verify(withCa.sub.secret, {
        id: String(got[0]!.headers['webhook-id']),
        timestamp: String(got[0]!.headers['webhook-timestamp']),
        signature: String(got[0]!.headers['webhook-signature']),
        body: got[0]!.body,
      });
      const noCa = await test({ name: 'noca', endpoint: url('/noca') });
      assert.equal(noCa.delivery.status, 'failed');
      assert.match(String(noCa.delivery.last_error), /certificate/i);
      const wrongPin = await test({ name: 'wrongpin', endpoint: url('/wrongpin'), pin_sha256: other.pinBase64 });
      assert.equal(wrongPin.delivery.status, 'failed');
      assert.match(String(wrongPin.delivery.last_error), /pin_sha256/);
      const pinned = await test({ name: 'pinned', endpoint: url('/pinned'), pin_sha256: cert.pinBase64 });
      assert.equal(pinned.delivery.status, 'delivered', String(pinned.delivery.last_error));
      assert.deepEqual(got.map((g) => g.path).sort(), ['/ca', '/pinned'], 'nothing reached the receiver without trust');
    });
  });
}
