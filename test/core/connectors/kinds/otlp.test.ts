/**
 * `otlp` into the real `@elastic/mockotlpserver` (OTLP/HTTP JSON on loopback, the development
 * `allow_insecure_http` flag) and into an HTTPS receiver that answers partial success: one merged
 * ExportLogsServiceRequest per batch, strict-valid against the opentelemetry-proto descriptors,
 * posted to the exact URL given; partial-success rejections become `rejected` with the server's
 * message; OTLP's retryable statuses retry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fromJson } from '@bufbuild/protobuf';
import { SecretUnavailableError } from '../../../../src/core/console/secrets-service.js';
import { mergeExportRequests, otlpKind } from '../../../../src/core/connectors/kinds/otlp.js';
import { ExportLogsServiceRequest, nonCamelKeys, requestForFromJson } from '../../../encoders/otlp-proto-registry.js';
import { answer, deadPort, eventItems, events, ledger, makeCert, recordItemsAs, secretsContext, signal, startReceiver } from './harness.js';

type Obj = Record<string, any>;
const require = createRequire(import.meta.url);
const { MockOtlpServer } = require('@elastic/mockotlpserver') as {
  MockOtlpServer: new (o: object) => { start(): Promise<void>; close(): Promise<void>; httpUrl: URL | string };
};
const cert = makeCert();

test('otlp: a batch of ledger records and events arrives at mockotlpserver as one export request, every record in order', async (t) => {
  const received: Obj[] = [];
  const server = new MockOtlpServer({
    services: ['http'],
    httpHostname: '127.0.0.1',
    httpPort: 0,
    logLevel: 'warn',
    onLogs: (l: Obj) => received.push(l),
  });
  await server.start();
  const s = await secretsContext();
  t.after(async () => {
    await server.close();
    await s.dispose();
  });
  const url = new URL('/v1/logs', String(server.httpUrl)).toString();
  const cfg = { url, allow_insecure_http: true };
  assert.deepEqual(otlpKind.validate?.(cfg), []);
  const sink = await otlpKind.open(cfg, s.ctx);
  const { records } = ledger(40);
  const items = [...recordItemsAs(records, 'notification', 'otlp'), ...eventItems(events(5), 'notification', 'otlp')];
  const r = await sink.send(items, signal());
  assert.equal(r.result, 'delivered', r.error);
  for (let i = 0; i < 50 && received.length === 0; i++) await new Promise((ok) => setTimeout(ok, 20));
  assert.equal(received.length, 1, 'one request for the batch');
  const req = received[0]!;
  assert.equal(req['resourceLogs'].length, 1, 'one resource (service.name control-plane)');
  const scopes = req['resourceLogs'][0]['scopeLogs'] as Obj[];
  assert.deepEqual(scopes.map((sl) => [sl['scope']['name'], sl['logRecords'].length]), [['svc.audit', 40], ['svc.events', 5]]);
  const seqs = (scopes[0]!['logRecords'] as Obj[]).map(
    (lr) => (lr['attributes'] as Obj[]).find((a) => a['key'] === 'svc.audit.seq')!['value']['intValue'],
  );
  assert.deepEqual(seqs, records.map((x) => String(x.seq)));
  await sink.close();
});

test('otlp: the merged request is strict OTLP JSON (opentelemetry-proto fromJson, lowerCamelCase keys)', () => {
  const { records } = ledger(12);
  const items = [...recordItemsAs(records, 'notification', 'otlp'), ...eventItems(events(3), 'notification', 'otlp_envelope')];
  const merged = mergeExportRequests(items);
  assert.equal(merged.records, 15);
  const obj = JSON.parse(merged.body) as Record<string, unknown>;
  assert.deepEqual(nonCamelKeys(obj), []);
  const msg = fromJson(ExportLogsServiceRequest, requestForFromJson(obj) as never) as unknown as {
    resourceLogs: Array<{ scopeLogs: Array<{ logRecords: unknown[] }> }>;
  };
  assert.equal(msg.resourceLogs[0]!.scopeLogs.reduce((n, sl) => n + sl.logRecords.length, 0), 15);
  assert.throws(() => mergeExportRequests([{ line: '{"not":"otlp"}', id: 'x', tenant: 't' }]), /not an OTLP export-logs request/);
});

test(
  'otlp: partial success — rejected records carry the server message; records_per_request 1 attributes them exactly; the URL is posted ' +
    'verbatim',
  async (t) => {
    const s = await secretsContext();
    // rejects every request whose first record is an odd seq; answers the OTLP JSON response shape
    const rx = await startReceiver(cert, (g, res) => {
      const req = JSON.parse(g.body.toString()) as Obj;
      const lrs = req['resourceLogs'].flatMap((rl: Obj) => rl['scopeLogs'].flatMap((sl: Obj) => sl['logRecords'])) as Obj[];
      const odd = lrs.filter(
        (lr) => Number((lr['attributes'] as Obj[]).find((a) => a['key'] === 'svc.audit.seq')!['value']['intValue']) % 2 === 1,
      ).length;
      if (odd === 0) return answer(res, 200, {});
      answer(res, 200, {
        partialSuccess: { rejectedLogRecords: String(odd), errorMessage: `${odd} records dropped: odd seq not accepted` },
      });
    });
    await s.set('otlp-key', 'ApiKey otlp-secret-value');
    t.after(async () => {
      await rx.close();
      await s.dispose();
    });
    const { records } = ledger(6);
    const items = recordItemsAs(records, 'notification', 'otlp');
    const exact = await otlpKind.open(
      {
        url: `${rx.url}/otlp/custom/logs?tenant=a`,
        tls: { pin_sha256: cert.pinBase64 },
        records_per_request: 1,
        auth_header: 'X-Api-Key',
        auth_secret: 'secret:otlp-key',
      },
      s.ctx,
    );
    const r = await exact.send(items, signal());
    assert.equal(r.result, 'delivered');
    assert.deepEqual(
      r.rejected?.map((x) => x.index),
      [0, 2, 4],
      'seq 1, 3, 5',
    );
    assert.match(r.rejected![0]!.error, /odd seq not accepted/);
    assert.equal(rx.got.length, 6);
    for (const g of rx.got) {
      assert.equal(g.url, '/otlp/custom/logs?tenant=a');
      assert.equal(g.headers['x-api-key'], 'ApiKey otlp-secret-value');
      assert.equal(g.headers['content-type'], 'application/json');
    }
    // one request for the batch: OTLP gives a count, not which records — every record of it is reported
    const whole = await otlpKind.open({ url: `${rx.url}/v1/logs`, tls: { pin_sha256: cert.pinBase64 } }, s.ctx);
    const w = await whole.send(items, signal());
    assert.equal(w.result, 'delivered');
    assert.equal(w.rejected?.length, 6);
    assert.match(w.rejected![0]!.error, /rejected 3 of 6 log records .*odd seq not accepted/);
    // a batch with no odd seq: delivered with nothing rejected
    const even = await whole.send(
      items.filter((i) => (i.seq ?? 0) % 2 === 0),
      signal(),
    );
    assert.deepEqual([even.result, even.rejected], ['delivered', undefined]);
    await exact.close();
    await whole.close();
  },
);

test(
  'otlp: 429/502/503/504 retry with Retry-After, 400 and 500 fail with the google.rpc.Status message, down retries, a deleted secret ' +
    'fails closed',
  async (t) => {
    const s = await secretsContext();
    let next: [number, Record<string, string>, unknown] = [503, { 'retry-after': '3' }, { code: 14, message: 'unavailable' }];
    const rx = await startReceiver(cert, (_g, res) => answer(res, next[0], next[2], next[1]));
    t.after(async () => {
      await rx.close();
      await s.dispose();
    });
    await s.set('k', 'Bearer k-value');
    const sink = await otlpKind.open({ url: `${rx.url}/v1/logs`, tls: { pin_sha256: cert.pinBase64 }, auth_secret: 'secret:k' }, s.ctx);
    const items = eventItems(events(4), 'notification', 'otlp');
    assert.deepEqual(await sink.send(items, signal()), {
      result: 'retry',
      status: 503,
      error: 'receiver answered 503: unavailable',
      retryAfterMs: 3000,
    });
    for (const st of [429, 502, 504]) {
      next = [st, {}, {}];
      assert.equal((await sink.send(items, signal())).result, 'retry', String(st));
    }
    next = [400, {}, { code: 3, message: 'bad timeUnixNano' }];
    assert.deepEqual(await sink.send(items, signal()), { result: 'failed', status: 400, error: 'receiver answered 400: bad timeUnixNano' });
    next = [500, {}, { code: 13, message: 'internal' }];
    assert.equal((await sink.send(items, signal())).result, 'failed', 'OTLP/HTTP: 500 is not retryable');
    await s.remove('k');
    await assert.rejects(sink.send(items, signal()), SecretUnavailableError);
    await sink.close();
    const down = await otlpKind.open({ url: `https://127.0.0.1:${await deadPort()}/v1/logs`, tls: { pin_sha256: cert.pinBase64 } }, s.ctx);
    const d = await down.send(items, signal());
    assert.equal(d.result, 'retry');
    assert.match(d.error ?? '', /ECONNREFUSED/);
    await down.close();
    // wrong certificate: no byte
    const other = makeCert();
    const rx2 = await startReceiver(other, (_g, res) => answer(res, 200, {}));
    const wrong = await otlpKind.open({ url: `${rx2.url}/v1/logs`, tls: { pin_sha256: cert.pinBase64 } }, s.ctx);
    assert.equal((await wrong.send(items, signal())).result, 'retry');
    assert.equal(rx2.bodyBytes(), 0);
    await wrong.close();
    await rx2.close();
  },
);

test('otlp: config refuses unknown fields; http only to loopback with the dev flag', () => {
  const v = otlpKind.validate!;
  assert.match(v({ url: 'http://collector:4318/v1/logs' }).join(';'), /https/);
  assert.match(v({ url: 'http://collector:4318/v1/logs', allow_insecure_http: true }).join(';'), /loopback/);
  assert.deepEqual(v({ url: 'https://collector:4318/v1/logs' }), []);
  assert.equal(otlpKind.format && 'fixed' in otlpKind.format ? otlpKind.format.fixed : '', 'otlp');
});
