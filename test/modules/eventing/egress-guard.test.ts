/**
 * The egress guard on webhooks (issue 47 item 9), on SQLite and Postgres: an HTTPS receiver
 * listening on 127.0.0.1 only, named in every spelling that reaches it (IPv4-mapped IPv6, decimal,
 * hex, short forms, `localhost.`, upper case, a host name resolving to loopback), is refused at
 * authoring (400 `egress_refused`) and at delivery (`…/test` records a failed attempt with that
 * reason, and the receiver sees no request) without the development flag; with the flag, loopback
 * still delivers. A destination an operator allows in SERVICE_EGRESS_ALLOW_PRIVATE is not refused.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap } from '../../auth/harness.js';
import { makeCert, type TestCert } from '../../cli/harness.js';
import { createEventingHarness, type EventingHarness } from './harness.js';

const DEV = 'SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS';
const ALLOW = 'SERVICE_EGRESS_ALLOW_PRIVATE';

/** This machine's own name, when it resolves to loopback only (it does in /etc/hosts here and in most containers). */
async function loopbackName(): Promise<string | null> {
  const name = hostname();
  const all = await lookup(name, { all: true }).catch(() => []);
  return all.length > 0 && all.every((a) => a.address.startsWith('127.') || a.address === '::1') ? name : null;
}

for (const b of await testStores()) {
  describe(`${b.backend}: the egress guard on webhooks`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: EventingHarness;
    let root: { session: string; tenant: string };
    let cert: TestCert;
    let server: https.Server;
    let port: number;
    const got: string[] = [];
    let spellings: string[];
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createEventingHarness(ts.store);
      root = await bootstrap(h);
      cert = makeCert();
      server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
        got.push(req.url ?? '');
        req.resume().on('end', () => res.writeHead(200).end());
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
      const name = await loopbackName();
      spellings = [
        '127.0.0.1',
        '[::ffff:127.0.0.1]',
        '[::ffff:7f00:1]',
        '2130706433',
        '0x7f.1',
        '0177.0.0.1',
        '127.1',
        'localhost',
        'localhost.',
        'LOCALHOST',
        '[::1]',
        '[64:ff9b::7f00:1]',
        ...(name ? [name] : []),
      ];
    });
    after(async () => {
      process.env[DEV] = 'true';
      delete process.env[ALLOW];
      server?.closeAllConnections();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      await h?.dispose();
      await ts?.dispose();
    });

    const call = (method: string, path: string, body?: unknown) =>
      h.call(method, path, { token: root.session, tenant: root.tenant, ...(body !== undefined ? { body } : {}) });
    const create = (name: string, host: string, extra: Record<string, unknown> = {}) =>
      call('POST', '/v1/m/eventing/subscriptions', {
        name,
        event_types: ['agent.created'],
        sink_format: 'json',
        endpoint: `https://${host}:${port}/${name}`,
        ...extra,
      });
    const test = async (id: string) => {
      const r = await call('POST', `/v1/m/eventing/subscriptions/${id}/test`);
      assert.equal(r.status, 200, r.text);
      return (r.json() as { delivery: { status: string; last_error: string | null } }).delivery;
    };

    it('without the development flag, every spelling of loopback and 169.254.169.254 is refused at authoring', async () => {
      delete process.env[DEV];
      try {
        for (const [i, host] of [...spellings, '169.254.169.254', '[fe80::1]', '10.0.0.1', '[fd00::1]', '0.0.0.0'].entries()) {
          const r = await create(`refused-${i}`, host);
          assert.equal(r.status, 400, `${host}: ${r.text}`);
          const e = (r.json() as { error: { code: string; message: string } }).error;
          assert.equal(e.code, 'egress_refused', host);
          assert.match(e.message, /SERVICE_EGRESS_ALLOW_PRIVATE/, host);
        }
        // the update path refuses as well
        process.env[DEV] = 'true';
        const ok = await create('update-me', '127.0.0.1', { pin_sha256: cert.pinBase64 });
        assert.equal(ok.status, 201, ok.text);
        delete process.env[DEV];
        const sub = ok.json() as { id: string; version: number };
        const put = await call('PUT', `/v1/m/eventing/subscriptions/${sub.id}`, {
          name: 'update-me',
          event_types: ['agent.created'],
          sink_format: 'json',
          endpoint: `https://[::ffff:127.0.0.1]:${port}/update-me`,
          version: sub.version,
        });
        assert.equal(put.status, 400, put.text);
        assert.equal((put.json() as { error: { code: string } }).error.code, 'egress_refused');
      } finally {
        process.env[DEV] = 'true';
      }
      assert.deepEqual(got, [], 'nothing reached the receiver');
    });

    it('a subscription made while allowed is refused at delivery once the flag is off: failed, with the reason, nothing sent', async () => {
      process.env[DEV] = 'true';
      const ids: Array<{ host: string; id: string }> = [];
      for (const [i, host] of spellings.entries()) {
        // half pinned (an agent of its own), half on the shared agent: both connect through the guard
        const r = await create(`later-${i}`, host, i % 2 === 0 ? { pin_sha256: cert.pinBase64 } : {});
        assert.equal(r.status, 201, `${host}: ${r.text}`);
        ids.push({ host, id: (r.json() as { id: string }).id });
      }
      process.env[ALLOW] = '169.254.0.0/16';
      const meta = await create('metadata', '169.254.169.254');
      assert.equal(meta.status, 201, meta.text);
      ids.push({ host: '169.254.169.254', id: (meta.json() as { id: string }).id });
      delete process.env[ALLOW];
      delete process.env[DEV];
      try {
        for (const { host, id } of ids) {
          const d = await test(id);
          assert.equal(d.status, 'failed', `${host}: ${d.last_error}`);
          assert.match(String(d.last_error), /^egress_refused: egress refused: .* is a (loopback|linkLocal)/, host);
        }
      } finally {
        process.env[DEV] = 'true';
      }
      assert.deepEqual(got, [], 'nothing reached the receiver');
    });

    it('with the development flag, loopback still delivers (a literal and a name resolving to it)', async () => {
      process.env[DEV] = 'true';
      for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', 'localhost']) {
        const r = await create(`dev-${got.length}-${host.replace(/\W/g, '')}`, host, { pin_sha256: cert.pinBase64 });
        assert.equal(r.status, 201, r.text);
        const d = await test((r.json() as { id: string }).id);
        assert.equal(d.status, 'delivered', `${host}: ${d.last_error}`);
      }
      assert.equal(got.length, 3);
    });

    it('SERVICE_EGRESS_ALLOW_PRIVATE lets an operator allow one loopback port without the development flag', async () => {
      delete process.env[DEV];
      process.env[ALLOW] = `127.0.0.1:${port}`;
      try {
        const r = await create('operator-allowed', '127.0.0.1', { pin_sha256: cert.pinBase64 });
        assert.equal(r.status, 201, r.text);
        const d = await test((r.json() as { id: string }).id);
        assert.equal(d.status, 'delivered', String(d.last_error));
        // another port of the same address stays refused
        const other = await call('POST', '/v1/m/eventing/subscriptions', {
          name: 'operator-other-port',
          event_types: ['agent.created'],
          sink_format: 'json',
          endpoint: `https://127.0.0.1:${port === 65535 ? 1 : port + 1}/x`,
        });
        assert.equal(other.status, 400, other.text);
      } finally {
        delete process.env[ALLOW];
        process.env[DEV] = 'true';
      }
    });
  });
}
