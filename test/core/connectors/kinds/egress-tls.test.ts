/**
 * Connectors under the egress guard and with explicit certificate verification (issue 47 items 9
 * and 10): with NODE_TLS_REJECT_UNAUTHORIZED=0 in this process (what Node would read as "verify
 * nothing"), syslog over TLS and the HTTP kinds still refuse a receiver with no trusted CA, a CA
 * that did not sign it, or another name, and send it nothing; without the development flag a
 * loopback or metadata destination in any spelling is refused at connect time, recorded as a
 * failed batch naming `egress_refused`, and the receiver sees no connection.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { siemKind } from '../../../../src/core/connectors/kinds/siem.js';
import { syslogKind } from '../../../../src/core/connectors/kinds/syslog.js';
import { answer, makeCert, secretsContext, signal, startReceiver, type Receiver, type SecretsCtx } from './harness.js';

const DEV = 'SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS';
const cert = makeCert(); // SAN localhost, 127.0.0.1
const other = makeCert();
const item = { id: 'r1', tenant: 't1', line: '<14>1 2026-12-07T00:00:00Z h app - - - hello' };

/** A TLS syslog receiver on 127.0.0.1: counts handshakes and bytes. */
async function tlsReceiver(): Promise<{ port: number; handshakes: () => number; bytes: () => number; close: () => Promise<void> }> {
  let handshakes = 0;
  let bytes = 0;
  const server = tls.createServer({ cert: cert.certPem, key: cert.keyPem }, (s) => {
    handshakes++;
    s.on('data', (d: Buffer) => (bytes += d.length));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    handshakes: () => handshakes,
    bytes: () => bytes,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('connectors: certificate verification whatever NODE_TLS_REJECT_UNAUTHORIZED says', () => {
  let s: SecretsCtx;
  let syslogRx: Awaited<ReturnType<typeof tlsReceiver>>;
  let httpRx: Receiver;
  before(async () => {
    s = await secretsContext();
    writeFileSync(join(s.ctx.dataDir, 'right-ca.pem'), cert.certPem);
    writeFileSync(join(s.ctx.dataDir, 'wrong-ca.pem'), other.certPem);
    syslogRx = await tlsReceiver();
    httpRx = await startReceiver(cert, (_g, res) => answer(res, 200, {}));
    process.env[DEV] = 'true';
    process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
  });
  after(async () => {
    delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    await syslogRx?.close();
    await httpRx?.close();
    await s?.dispose();
  });

  it('syslog TLS: no CA, a wrong CA, a wrong name are refused; the right CA and name deliver', async () => {
    const cases: Array<[string, Record<string, unknown>, 'delivered' | 'retry']> = [
      ['no CA', {}, 'retry'],
      ['wrong CA', { ca_file: 'wrong-ca.pem' }, 'retry'],
      ['wrong name', { ca_file: 'right-ca.pem', server_name: 'receiver.example' }, 'retry'],
      ['right CA', { ca_file: 'right-ca.pem' }, 'delivered'],
    ];
    for (const [what, extra, want] of cases) {
      const before = syslogRx.bytes();
      const sink = await syslogKind.open({ host: '127.0.0.1', port: syslogRx.port, ...extra }, s.ctx);
      const r = await sink.send([item], signal());
      await sink.close();
      assert.equal(r.result, want, `${what}: ${r.error}`);
      if (want === 'retry') {
        assert.match(String(r.error), /certificate|self.signed|altname|Hostname/i, what);
        assert.equal(syslogRx.bytes(), before, `${what}: no byte of a record reached the receiver`);
      } else {
        // the receiver reads the record a moment after the sink's write completed
        for (let i = 0; i < 100 && syslogRx.bytes() === before; i++) await new Promise((r) => setTimeout(r, 20));
        assert.ok(syslogRx.bytes() > before, what);
      }
    }
  });

  it('HTTP kinds: no CA, a wrong CA, a wrong name are refused; the right CA delivers', async () => {
    const cases: Array<[string, string, Record<string, unknown>, 'delivered' | 'retry']> = [
      ['no CA', httpRx.url, {}, 'retry'],
      ['wrong CA', httpRx.url, { tls: { ca_file: 'wrong-ca.pem' } }, 'retry'],
      ['right CA', httpRx.url, { tls: { ca_file: 'right-ca.pem' } }, 'delivered'],
    ];
    // a name that resolves to loopback (allowed by the development flag) but is not in the certificate
    const name = hostname();
    const all = await lookup(name, { all: true }).catch(() => []);
    if (all.length > 0 && all.every((a) => a.address.startsWith('127.')))
      cases.push(['wrong name', `https://${name}:${httpRx.port}`, { tls: { ca_file: 'right-ca.pem' } }, 'retry']);
    for (const [what, url, extra, want] of cases) {
      const n = httpRx.bodyBytes();
      const sink = await siemKind.open({ url: `${url}/in`, ...extra }, s.ctx);
      const r = await sink.send([item], signal());
      await sink.close();
      assert.equal(r.result, want, `${what}: ${r.error}`);
      if (want === 'retry') assert.equal(httpRx.bodyBytes(), n, `${what}: nothing reached the receiver`);
    }
  });
});

describe('connectors: the egress guard at connect time', () => {
  let s: SecretsCtx;
  let syslogRx: Awaited<ReturnType<typeof tlsReceiver>>;
  let httpRx: Receiver;
  before(async () => {
    s = await secretsContext();
    syslogRx = await tlsReceiver();
    httpRx = await startReceiver(cert, (_g, res) => answer(res, 200, {}));
  });
  after(async () => {
    process.env[DEV] = 'true';
    await syslogRx?.close();
    await httpRx?.close();
    await s?.dispose();
  });

  it('without the development flag, loopback in any spelling and 169.254.169.254 are failed batches naming egress_refused', async () => {
    delete process.env[DEV];
    const hosts = ['127.0.0.1', '::ffff:127.0.0.1', '[::ffff:7f00:1]', '2130706433', '0x7f.1', '127.1', 'localhost.', 'LOCALHOST', '::1'];
    for (const host of hosts) {
      const sink = await syslogKind.open({ host, port: syslogRx.port, pin_sha256: cert.pinBase64 }, s.ctx);
      const r = await sink.send([item], signal());
      await sink.close();
      assert.equal(r.result, 'failed', `syslog ${host}: ${r.error}`);
      assert.match(String(r.error), /^egress_refused: .*loopback/, host);
    }
    const udp = await syslogKind.open({ host: '127.0.0.1', port: 514, transport: 'udp', allow_cleartext: true }, s.ctx);
    assert.match(String((await udp.send([item], signal())).error), /^egress_refused/);
    await udp.close();
    for (const host of ['[::ffff:127.0.0.1]', '0x7f.1', 'localhost.', '169.254.169.254', '[64:ff9b::a9fe:a9fe]']) {
      const sink = await siemKind.open({ url: `https://${host}:${httpRx.port}/in`, tls: { pin_sha256: cert.pinBase64 } }, s.ctx);
      const r = await sink.send([item], signal());
      await sink.close();
      assert.equal(r.result, 'failed', `siem ${host}: ${r.error}`);
      assert.match(String(r.error), /^egress_refused: .*(loopback|linkLocal)/, host);
    }
    assert.equal(syslogRx.handshakes(), 0, 'no connection reached the syslog receiver');
    assert.equal(httpRx.secureConnections(), 0, 'no connection reached the HTTP receiver');
  });

  it('with the development flag, loopback delivers', async () => {
    process.env[DEV] = 'true';
    const sink = await syslogKind.open({ host: 'localhost', port: syslogRx.port, pin_sha256: cert.pinBase64 }, s.ctx);
    const r = await sink.send([item], signal());
    await sink.close();
    assert.equal(r.result, 'delivered', String(r.error));
  });
});
