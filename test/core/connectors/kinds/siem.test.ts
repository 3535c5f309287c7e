/**
 * `siem` (and the HTTP client every HTTP kind shares) against a real HTTPS receiver on loopback:
 * NDJSON and JSON-array bodies of real encoded records and events, any 2xx delivered without
 * reading the body, 5xx/429 retried with Retry-After, 4xx failed, a receiver that is down retried,
 * a wrong certificate or pin gets no byte, a deleted secret fails closed, no secret in errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import { SecretUnavailableError } from '../../../../src/core/console/secrets-service.js';
import { siemKind, type SiemConfig } from '../../../../src/core/connectors/kinds/siem.js';
import { parseRetryAfter } from '../../../../src/core/connectors/kinds/http-common.js';
import { answer, deadPort, eventItems, events, ledger, makeCert, recordItemsAs, secretsContext, signal, startReceiver } from './harness.js';

const cert = makeCert();
const other = makeCert();

test(
  'siem: NDJSON of encoded items arrives byte for byte with the auth header from the secret; any 2xx is delivered, partial-success ' +
    'bodies are not read',
  async (t) => {
    const s = await secretsContext();
    const rx = await startReceiver(cert, (_g, res) =>
      answer(res, 200, { partialSuccess: { rejectedLogRecords: 3, errorMessage: 'ignored by siem' } }),
    );
    t.after(async () => {
      await rx.close();
      await s.dispose();
    });
    await s.set('siem-token', 'Bearer s3cr3t-siem-token-value');
    const cfg: SiemConfig = {
      url: `${rx.url}/ingest/v1?src=svc`,
      tls: { pin_sha256: cert.pinBase64 },
      auth_secret: 'secret:siem-token',
      headers: { 'X-Source': 'svc' },
    };
    assert.deepEqual(siemKind.validate?.(cfg), []);
    const sink = await siemKind.open(cfg, s.ctx);
    const { records } = ledger(25);
    for (const token of ['json', 'cef', 'leef', 'syslog', 'ocsf', 'asim', 'otlp']) {
      const items = recordItemsAs(records, 'notification', token);
      const r = await sink.send(items, signal());
      assert.equal(r.result, 'delivered', `${token}: ${r.error}`);
      assert.equal(r.rejected, undefined, 'the generic sink never reads partial success');
      const g = rx.got.at(-1)!;
      assert.equal(g.url, '/ingest/v1?src=svc', 'the URL is posted verbatim');
      assert.equal(g.headers['authorization'], 'Bearer s3cr3t-siem-token-value');
      assert.equal(g.headers['content-type'], 'application/x-ndjson');
      assert.equal(g.headers['x-source'], 'svc');
      assert.equal(g.body.toString('utf8'), items.map((i) => `${i.line}\n`).join(''));
    }
    await sink.close();
  },
);

test('siem: json_array embeds JSON lines as values and other lines as strings; events of every notification format', async (t) => {
  const s = await secretsContext();
  const rx = await startReceiver(cert, (_g, res) => answer(res, 202, ''));
  t.after(async () => {
    await rx.close();
    await s.dispose();
  });
  const sink = await siemKind.open({ url: `${rx.url}/a`, tls: { pin_sha256: cert.pinHex }, body: 'json_array' }, s.ctx);
  const evs = events(10);
  for (const token of ['json', 'cef', 'ocsf']) {
    const items = eventItems(evs, 'notification', token);
    const r = await sink.send(items, signal());
    assert.equal(r.result, 'delivered');
    const got = JSON.parse(rx.got.at(-1)!.body.toString('utf8')) as unknown[];
    assert.equal(got.length, 10);
    assert.equal(rx.got.at(-1)!.headers['content-type'], 'application/json');
    for (let i = 0; i < 10; i++) {
      const line = items[i]!.line;
      assert.deepEqual(got[i], line.startsWith('{') ? JSON.parse(line) : line);
    }
  }
  await sink.close();
});

test(
  'siem: 5xx and 429 retry (Retry-After in ms), 4xx fails, redirects are not followed, and the body of an error is excerpted without ' +
    'secrets',
  async (t) => {
    const s = await secretsContext();
    let next: [number, Record<string, string>, string] = [503, {}, 'busy'];
    const rx = await startReceiver(cert, (_g, res) => {
      res.writeHead(next[0], next[1]);
      res.end(next[2]);
    });
    t.after(async () => {
      await rx.close();
      await s.dispose();
    });
    await s.set('tok', 'Bearer never-in-errors-123');
    const sink = await siemKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 }, auth_secret: 'secret:tok' }, s.ctx);
    const items = eventItems(events(3), 'notification', 'json');
    let r = await sink.send(items, signal());
    assert.deepEqual([r.result, r.status], ['retry', 503]);
    next = [429, { 'retry-after': '7' }, ''];
    r = await sink.send(items, signal());
    assert.deepEqual([r.result, r.status, r.retryAfterMs], ['retry', 429, 7000]);
    const when = new Date(Date.now() + 30_000).toUTCString();
    next = [503, { 'retry-after': when }, ''];
    r = await sink.send(items, signal());
    assert.ok(r.retryAfterMs !== undefined && r.retryAfterMs > 25_000 && r.retryAfterMs <= 30_000, String(r.retryAfterMs));
    for (const st of [408, 425, 500, 502, 504]) {
      next = [st, {}, ''];
      assert.equal((await sink.send(items, signal())).result, 'retry', String(st));
    }
    next = [400, { 'content-type': 'text/plain' }, 'malformed event at line 2'];
    r = await sink.send(items, signal());
    assert.deepEqual([r.result, r.status], ['failed', 400]);
    assert.match(r.error ?? '', /400: malformed event at line 2/);
    for (const st of [401, 403, 404, 413]) {
      next = [st, {}, ''];
      assert.equal((await sink.send(items, signal())).result, 'failed', String(st));
    }
    const before = rx.got.length;
    next = [302, { location: `${rx.url}/elsewhere` }, ''];
    r = await sink.send(items, signal());
    assert.equal(r.result, 'failed');
    assert.match(r.error ?? '', /redirects are not followed/);
    assert.equal(rx.got.length, before + 1, 'the redirect target was not requested');
    for (const g of rx.got) assert.equal(g.url, '/');
    await sink.close();
  },
);

test('siem: a receiver that is down is a network error to retry; once it is back the same batch is delivered', async (t) => {
  const s = await secretsContext();
  const port = await deadPort();
  t.after(() => s.dispose());
  const sink = await siemKind.open({ url: `https://127.0.0.1:${port}/in`, tls: { pin_sha256: cert.pinBase64 }, timeout_ms: 2000 }, s.ctx);
  const items = eventItems(events(5), 'notification', 'json');
  const down = await sink.send(items, signal());
  assert.equal(down.result, 'retry');
  assert.match(down.error ?? '', /network: ECONNREFUSED/);
  const rx = await startReceiver(cert, (_g, res) => answer(res, 200, {}), port);
  t.after(() => rx.close());
  const up = await sink.send(items, signal());
  assert.equal(up.result, 'delivered');
  assert.equal(rx.got.length, 1);
  assert.equal(rx.got[0]!.body.toString(), items.map((i) => `${i.line}\n`).join(''));
  await sink.close();
});

test('siem: a receiver that takes the request and never answers is a timeout to retry (timeout_ms)', async (t) => {
  const s = await secretsContext();
  const rx = await startReceiver(cert, () => undefined); // reads the body, never answers
  t.after(async () => {
    await rx.close();
    await s.dispose();
  });
  const sink = await siemKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 }, timeout_ms: 300 }, s.ctx);
  const t0 = Date.now();
  const r = await sink.send(eventItems(events(2), 'notification', 'json'), signal());
  assert.deepEqual([r.result, r.error], ['retry', 'no answer in time (timeout_ms)']);
  assert.ok(Date.now() - t0 < 5000);
  assert.equal(rx.got.length, 1);
  // the runtime's signal aborts a send too
  const ac = new AbortController();
  const pending = sink.send(eventItems(events(1), 'notification', 'json'), ac.signal);
  setTimeout(() => ac.abort(), 50);
  assert.deepEqual([(await pending).result, (await pending).error], ['retry', 'aborted by the runtime']);
  await sink.close();
});

test('siem: a receiver with the wrong certificate gets no request byte (unknown CA, pin mismatch); the right CA file passes', async (t) => {
  const s = await secretsContext();
  const rx = await startReceiver(other, (_g, res) => answer(res, 200, {}));
  t.after(async () => {
    await rx.close();
    await s.dispose();
  });
  const items = eventItems(events(2), 'notification', 'json');
  // system roots only: the self-signed certificate is refused in the handshake
  const plain = await siemKind.open({ url: rx.url }, s.ctx);
  const a = await plain.send(items, signal());
  assert.equal(a.result, 'retry');
  assert.match(a.error ?? '', /^tls: /);
  await plain.close();
  // a pin of another key: the socket is destroyed before undici writes
  const pinned = await siemKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 } }, s.ctx);
  const b = await pinned.send(items, signal());
  assert.equal(b.result, 'retry');
  assert.match(b.error ?? '', /pin_sha256/);
  await pinned.close();
  // a CA file of another certificate: chain verification fails
  const wrongCa = await siemKind.open({ url: rx.url, tls: { ca_file: cert.certPath } }, s.ctx);
  assert.equal((await wrongCa.send(items, signal())).result, 'retry');
  await wrongCa.close();
  assert.equal(rx.got.length, 0);
  assert.equal(rx.bodyBytes(), 0, 'not one byte of a request reached the receiver');
  // the receiver's own certificate as CA file (host name 127.0.0.1 is in its SANs): delivered
  const right = await siemKind.open({ url: rx.url, tls: { ca_file: other.certPath } }, s.ctx);
  assert.equal((await right.send(items, signal())).result, 'delivered');
  await right.close();
});

test('siem: a deleted secret fails closed at open and at send (nothing sent); the error names the secret, never its value', async (t) => {
  const s = await secretsContext();
  const rx = await startReceiver(cert, (_g, res) => answer(res, 200, {}));
  t.after(async () => {
    await rx.close();
    await s.dispose();
  });
  await s.set('gone', 'Bearer value-that-must-not-leak');
  const cfg: SiemConfig = { url: rx.url, tls: { pin_sha256: cert.pinBase64 }, auth_secret: 'secret:gone' };
  const sink = await siemKind.open(cfg, s.ctx);
  const items = eventItems(events(2), 'notification', 'json');
  assert.equal((await sink.send(items, signal())).result, 'delivered');
  await s.remove('gone');
  await assert.rejects(
    sink.send(items, signal()),
    (err: unknown) =>
      err instanceof SecretUnavailableError && /"gone"/.test(err.message) && !err.message.includes('value-that-must-not-leak'),
  );
  await assert.rejects(siemKind.open(cfg, s.ctx), SecretUnavailableError);
  assert.equal(rx.got.length, 1, 'nothing was sent after the secret was deleted');
  await sink.close();
});

test(
  'siem: the config schema refuses unknown fields and bad values; validate refuses http, credentials in the URL and reserved headers',
  () => {
    const check = Compile(siemKind.configSchema);
    assert.equal(check.Check({ url: 'https://siem.example/in' }), true);
    assert.equal(check.Check({ url: 'https://siem.example/in', extra: 1 }), false);
    assert.equal(check.Check({ url: 'https://siem.example/in', tls: { pin_sha256: 'nope' } }), false);
    assert.equal(
      check.Check({ url: 'https://siem.example/in', auth_secret: 'plain-value' }),
      false,
      'a secret field takes a reference only',
    );
    assert.equal(check.Check({ url: 'https://siem.example/in', body: 'xml' }), false);
    const v = (c: SiemConfig) => siemKind.validate!(c);
    assert.deepEqual(v({ url: 'https://siem.example/in' }), []);
    assert.match(v({ url: 'http://siem.example/in' }).join(';'), /must be https/);
    assert.match(v({ url: 'http://siem.example/in', allow_insecure_http: true }).join(';'), /loopback/);
    assert.deepEqual(v({ url: 'http://127.0.0.1:8080/in', allow_insecure_http: true }), []);
    assert.match(v({ url: 'http://127.0.0.1:8080/in', allow_insecure_http: true, tls: { ca_file: 'x' } }).join(';'), /never downgraded/);
    assert.match(v({ url: 'https://user:pw@siem.example/in' }).join(';'), /credentials/);
    assert.match(v({ url: 'https://siem.example/in', headers: { Authorization: 'x' } }).join(';'), /may not set Authorization/);
    assert.match(v({ url: 'https://siem.example/in', auth_header: 'X-Key' }).join(';'), /needs auth_secret/);
  },
);

test('Retry-After: delta-seconds and HTTP-date, capped at a day; garbage is ignored', () => {
  assert.equal(parseRetryAfter('120'), 120_000);
  assert.equal(parseRetryAfter('99999999'), 86_400_000);
  assert.equal(parseRetryAfter('soon'), undefined);
  assert.equal(parseRetryAfter(undefined), undefined);
  const now = Date.parse('2026-11-27T12:00:00Z');
  assert.equal(parseRetryAfter('Fri, 27 Nov 2026 12:00:30 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Fri, 27 Nov 2026 11:00:00 GMT', now), 0);
});
