/**
 * `splunkhec` against a receiver implementing the documented HEC contract (hec-receiver.ts),
 * cross-checked with Splunk's own `splunk-logging` client sending the same events into the same
 * receiver: what arrives is identical. Event and raw endpoints, batching, per-event rejection by
 * `invalid-event-number`, `code != 0` answers, indexer acknowledgement, faults, fail-closed secrets.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { SecretUnavailableError } from '../../../../src/core/console/secrets-service.js';
import { splunkHecKind, type SplunkHecConfig } from '../../../../src/core/connectors/kinds/splunkhec.js';
import type { SinkItem } from '../../../../src/core/connectors/kinds/types.js';
import { hecHandler, hecState, type HecEvent } from './hec-receiver.js';
import { deadPort, eventItems, events, ledger, makeCert, recordItemsAs, secretsContext, signal, startReceiver } from './harness.js';

const require = createRequire(import.meta.url);
const SplunkLogger = require('splunk-logging').Logger as new (cfg: object) => {
  send(ctx: object, cb?: (err: unknown, resp: unknown, body: unknown) => void): void;
  eventFormatter: (message: unknown, severity: string) => unknown;
  requestOptions: Record<string, unknown>;
  error: (err: unknown) => void;
};
const cert = makeCert();
const TOKEN = '0f5c2a9e-1b2c-4d3e-8f90-123456789abc';
const META = { host: 'svc-cp-1', source: 'svc:audit', sourcetype: '_json', index: 'svc' };

/** Send the items with Splunk's reference client (one batch), its event formatter passing the message through. */
async function sendWithSplunkLogging(url: string, items: readonly SinkItem[]): Promise<void> {
  const logger = new SplunkLogger({ token: TOKEN, url: `${url}/services/collector/event`, maxBatchCount: items.length });
  logger.requestOptions['strictSSL'] = false; // the reference client's TLS is not under test; ours is
  logger.eventFormatter = (message) => message;
  const errors: unknown[] = [];
  logger.error = (err) => errors.push(err);
  await new Promise<void>((ok, ko) => {
    items.forEach((item, i) => {
      let message: unknown = item.line;
      try {
        if (item.line.startsWith('{')) message = JSON.parse(item.line);
      } catch {
        /* a string */
      }
      const metadata = { ...META, ...(item.time !== undefined ? { time: Date.parse(item.time) } : {}) };
      logger.send({ message, metadata }, i === items.length - 1 ? (err) => (err ? ko(err) : ok()) : undefined);
    });
  });
  assert.deepEqual(errors, []);
}

/** A HEC receiver and a secrets store holding the token as `secret:hec-token`, both closed after the test. */
async function hec(t: TestContext, opts?: Parameters<typeof hecState>[1]) {
  const s = await secretsContext();
  const st = hecState(TOKEN, opts);
  const rx = await startReceiver(cert, hecHandler(st));
  t.after(async () => {
    await rx.close();
    await s.dispose();
  });
  await s.set('hec-token', TOKEN);
  return { s, st, rx };
}

const strip = (e: HecEvent): Omit<HecEvent, 'channel'> => {
  const { channel: _c, ...rest } = e;
  return rest;
};

test(
  "splunkhec: the event endpoint delivers what Splunk's splunk-logging client delivers for the same events (json, cef, ocsf; records " +
    'and events)',
  async (t) => {
    const { s, st, rx } = await hec(t);
    const cfg: SplunkHecConfig = { url: rx.url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:hec-token', ...META };
    assert.deepEqual(splunkHecKind.validate?.(cfg), []);
    const sink = await splunkHecKind.open(cfg, s.ctx);
    const { records } = ledger(30);
    for (const [name, items] of [
      ['json records', recordItemsAs(records, 'notification', 'json')],
      ['cef records', recordItemsAs(records, 'notification', 'cef')],
      ['ocsf events', eventItems(events(12), 'notification', 'ocsf')],
      ['leef events', eventItems(events(12), 'notification', 'leef')],
    ] as const) {
      st.events.length = 0;
      const r = await sink.send(items, signal());
      assert.equal(r.result, 'delivered', `${name}: ${r.error}`);
      const ours = st.events.map(strip);
      assert.equal(ours.length, items.length, name);
      st.events.length = 0;
      await sendWithSplunkLogging(rx.url, items);
      const theirs = st.events.map(strip);
      assert.deepEqual(ours, theirs, `${name}: our events equal splunk-logging's`);
      // and they are the items: JSON documents as objects, text lines as strings, times to the millisecond
      items.forEach((it, i) => {
        assert.deepEqual(ours[i]!.event, it.line.startsWith('{') ? JSON.parse(it.line) : it.line);
        assert.equal(ours[i]!.time, Date.parse(it.time!) / 1000);
      });
    }
    const g = rx.got.find((x) => x.url === '/services/collector/event')!;
    assert.equal(g.headers['authorization'], `Splunk ${TOKEN}`);
    assert.match(String(g.headers['x-splunk-request-channel']), /^[0-9a-f-]{36}$/);
    await sink.close();
  },
);

test('splunkhec: the raw endpoint takes LF-separated lines with metadata in the query and a channel', async (t) => {
  const { s, st, rx } = await hec(t);
  const sink = await splunkHecKind.open(
    { url: rx.url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:hec-token', endpoint: 'raw', ...META },
    s.ctx,
  );
  const items = recordItemsAs(ledger(20).records, 'notification', 'syslog');
  const r = await sink.send(items, signal());
  assert.equal(r.result, 'delivered', r.error);
  assert.deepEqual(st.events.map((e) => e.event), items.map((i) => i.line));
  assert.deepEqual(
    { host: st.events[0]!.host, source: st.events[0]!.source, sourcetype: st.events[0]!.sourcetype, index: st.events[0]!.index },
    META,
  );
  assert.match(rx.got[0]!.url, /^\/services\/collector\/raw\?host=svc-cp-1&source=svc%3Aaudit&sourcetype=_json&index=svc$/);
  await sink.close();
});

test(
  'splunkhec: an event HEC refuses by invalid-event-number is ' + 'rejected alone; the events after it are posted again and arrive once',
  async (t) => {
    const { s, st, rx } = await hec(t);
    const sink = await splunkHecKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:hec-token' }, s.ctx);
    const items = eventItems(events(10), 'notification', 'json');
    // two blank items: HEC code 13 "Event field cannot be blank"
    items[3] = { ...items[3]!, line: '' };
    items[7] = { ...items[7]!, line: '' };
    const r = await sink.send(items, signal());
    assert.equal(r.result, 'delivered');
    assert.deepEqual(
      r.rejected?.map((x) => x.index),
      [3, 7],
    );
    assert.match(r.rejected![0]!.error, /HEC code 13: Event field cannot be blank/);
    assert.equal(rx.got.length, 3, 'first request, then the rest after 3, then the rest after 7');
    assert.deepEqual(
      st.events.map((e) => (e.event as { id: string }).id),
      items.filter((_, i) => i !== 3 && i !== 7).map((i) => i.id),
    );
    await sink.close();
  },
);

test(
  'splunkhec: code != 0 — busy (9) and 5xx retry, invalid token (4) ' + 'and incorrect index (7) fail, naming the code but never the token',
  async (t) => {
    const { s, st, rx } = await hec(t);
    await s.set('wrong-token', 'ffffffff-0000-4000-8000-000000000000');
    const items = eventItems(events(3), 'notification', 'json');
    const good = await splunkHecKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:hec-token' }, s.ctx);
    st.busy = 9;
    const busy = await good.send(items, signal());
    assert.deepEqual([busy.result, busy.status, busy.error], ['retry', 503, 'HEC code 9 (HTTP 503): Server is busy']);
    st.busy = 0;
    const bad = await splunkHecKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:wrong-token' }, s.ctx);
    const r = await bad.send(items, signal());
    assert.deepEqual([r.result, r.status, r.error], ['failed', 403, 'HEC code 4 (HTTP 403): Invalid token']);
    const idx = await splunkHecKind.open(
      { url: rx.url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:hec-token', index: 'not-allowed' },
      s.ctx,
    );
    const ri = await idx.send(items, signal());
    assert.deepEqual([ri.result, ri.status], ['failed', 400]);
    assert.match(ri.error ?? '', /HEC code 7/);
    for (const x of [busy, r, ri]) for (const v of s.values) assert.ok(!(x.error ?? '').includes(v), 'no secret in an error');
    assert.equal(st.events.length, 0);
    for (const sink of [good, bad, idx]) await sink.close();
  },
);

test(
  'splunkhec: indexer acknowledgement — the batch is delivered once ' + 'every ackId reads true; unconfirmed within the timeout retries',
  async (t) => {
    const { s, st, rx } = await hec(t, { ack: true, ackAfterPolls: 2 });
    const channel = '11111111-2222-4333-8444-555555555555';
    const sink = await splunkHecKind.open(
      {
        url: rx.url,
        tls: { pin_sha256: cert.pinBase64 },
        token_secret: 'secret:hec-token',
        channel,
        ack: { enabled: true, poll_ms: 50, timeout_ms: 5000 },
      },
      s.ctx,
    );
    const items = eventItems(events(5), 'notification', 'json');
    const r = await sink.send(items, signal());
    assert.equal(r.result, 'delivered', r.error);
    assert.equal(st.polls, 3, 'polled until the ack read true');
    const acks = rx.got.filter((g) => g.url === '/services/collector/ack');
    assert.deepEqual(JSON.parse(acks[0]!.body.toString()), { acks: [0] });
    assert.ok(rx.got.every((g) => g.headers['x-splunk-request-channel'] === channel));
    st.polls = 0;
    st.ackAfterPolls = 1_000_000;
    const slow = await splunkHecKind.open(
      {
        url: rx.url,
        tls: { pin_sha256: cert.pinBase64 },
        token_secret: 'secret:hec-token',
        ack: { enabled: true, poll_ms: 100, timeout_ms: 1000 },
      },
      s.ctx,
    );
    const u = await slow.send(items, signal());
    assert.equal(u.result, 'retry');
    assert.match(u.error ?? '', /not confirmed within ack.timeout_ms/);
    // acknowledgement asked for, but the token has it off (no ackId in the answer): failed, never "indexed"
    const noAck = hecState(TOKEN);
    const rx2 = await startReceiver(cert, hecHandler(noAck));
    const off = await splunkHecKind.open(
      { url: rx2.url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:hec-token', ack: { enabled: true } },
      s.ctx,
    );
    const o = await off.send(items, signal());
    assert.equal(o.result, 'failed');
    assert.match(o.error ?? '', /no ackId/);
    await off.close();
    await rx2.close();
    await sink.close();
    await slow.close();
  },
);

test('splunkhec: receiver down retries; wrong certificate gets no byte; a deleted token fails closed', async (t) => {
  const s = await secretsContext();
  t.after(() => s.dispose());
  await s.set('hec-token', TOKEN);
  const items = eventItems(events(3), 'notification', 'json');
  const down = await splunkHecKind.open(
    { url: `https://127.0.0.1:${await deadPort()}`, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:hec-token' },
    s.ctx,
  );
  assert.equal((await down.send(items, signal())).result, 'retry');
  await down.close();
  const other = makeCert();
  const st = hecState(TOKEN);
  const rx = await startReceiver(other, hecHandler(st));
  t.after(() => rx.close());
  const wrong = await splunkHecKind.open({ url: rx.url, tls: { ca_file: cert.certPath }, token_secret: 'secret:hec-token' }, s.ctx);
  const w = await wrong.send(items, signal());
  assert.equal(w.result, 'retry');
  assert.match(w.error ?? '', /^tls: /);
  assert.equal(rx.bodyBytes(), 0);
  await wrong.close();
  const ok = await splunkHecKind.open({ url: rx.url, tls: { pin_sha256: other.pinBase64 }, token_secret: 'secret:hec-token' }, s.ctx);
  assert.equal((await ok.send(items, signal())).result, 'delivered');
  await s.remove('hec-token');
  await assert.rejects(ok.send(items, signal()), SecretUnavailableError);
  await assert.rejects(splunkHecKind.open({ url: rx.url, token_secret: 'secret:hec-token' }, s.ctx), SecretUnavailableError);
  assert.equal(st.events.length, 3);
  await ok.close();
});

test('splunkhec: validate wants the base URL; the schema refuses unknown fields and a literal token', async () => {
  const { Compile } = await import('typebox/compile');
  const check = Compile(splunkHecKind.configSchema);
  assert.equal(check.Check({ url: 'https://splunk:8088', token_secret: 'secret:hec' }), true);
  assert.equal(check.Check({ url: 'https://splunk:8088', token_secret: TOKEN }), false);
  assert.equal(check.Check({ url: 'https://splunk:8088', token_secret: 'secret:hec', batch: 5 }), false);
  assert.match(
    splunkHecKind.validate!({ url: 'https://splunk:8088/services/collector/event', token_secret: 'secret:hec' }).join(';'),
    /base URL/,
  );
});
