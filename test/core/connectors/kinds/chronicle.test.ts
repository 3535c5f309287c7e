/**
 * `chronicle` against a receiver implementing the documented Chronicle wire contracts:
 * `…/instances/I/events:import` (`{"inlineSource":{"events":[{"udm":{…}}]}}`, empty answer on
 * success, the whole request refused with a google.rpc.Status when one event is invalid) and the
 * legacy `v2/udmevents:batchCreate` (`{"customer_id","events":[…]}`); `Authorization: Bearer`.
 * The receiver checks each UDM event's documented shape (top-level nouns, metadata.event_type from
 * the UDM enum, the USER_RESOURCE_* requirements, severity enum, RFC 3339 event_timestamp).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretUnavailableError } from '../../../../src/core/console/secrets-service.js';
import { chronicleKind, type ChronicleConfig } from '../../../../src/core/connectors/kinds/chronicle.js';
import {
  answer,
  deadPort,
  eventItems,
  events,
  ledger,
  makeCert,
  recordItemsAs,
  secretsContext,
  signal,
  startReceiver,
  type Got,
} from './harness.js';

type Obj = Record<string, any>;
const cert = makeCert();
const TOKEN = 'ya29.test-access-token';
const CUSTOMER = '0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3';
const IMPORT_PATH = '/v1/projects/p1/locations/us/instances/i-1/events:import';
const UDM_KEYS = new Set([
  'metadata',
  'additional',
  'principal',
  'src',
  'target',
  'intermediary',
  'observer',
  'about',
  'security_result',
  'network',
  'extensions',
]);
const EVENT_TYPES = new Set([
  'GENERIC_EVENT',
  'USER_RESOURCE_CREATION',
  'USER_RESOURCE_UPDATE_CONTENT',
  'USER_RESOURCE_DELETION',
  'USER_RESOURCE_ACCESS',
  'STATUS_UPDATE',
  'USER_LOGIN',
]);
const SEVERITIES = new Set(['UNKNOWN_SEVERITY', 'INFORMATIONAL', 'ERROR', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']);

function udmProblem(u: Obj): string | null {
  for (const k of Object.keys(u)) if (!UDM_KEYS.has(k)) return `unknown UDM field ${k}`;
  const m = u['metadata'] as Obj | undefined;
  if (!m || !EVENT_TYPES.has(m['event_type'])) return `metadata.event_type ${JSON.stringify(m?.['event_type'])} is invalid`;
  if (m['event_timestamp'] !== undefined && Number.isNaN(Date.parse(m['event_timestamp'])))
    return 'metadata.event_timestamp is not RFC 3339';
  if (String(m['event_type']).startsWith('USER_RESOURCE_') && (!u['principal']?.['user'] || !u['target']?.['resource']))
    return `${m['event_type']} needs principal.user and target.resource`;
  for (const r of (u['security_result'] as Obj[] | undefined) ?? [])
    if (r['severity'] !== undefined && !SEVERITIES.has(r['severity'])) return `security_result.severity ${r['severity']} is invalid`;
  if (u['additional'] !== undefined && (typeof u['additional'] !== 'object' || Array.isArray(u['additional'])))
    return 'additional must be a Struct';
  return null;
}

function chronicleReceiver() {
  const st = { udm: [] as Obj[], status: 0 };
  const handler = (g: Got, res: import('node:http').ServerResponse): void => {
    if (g.headers['authorization'] !== `Bearer ${TOKEN}`)
      return answer(res, 401, {
        error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' },
      });
    if (st.status !== 0)
      return answer(
        res,
        st.status,
        { error: { code: st.status, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } },
        { 'retry-after': '5' },
      );
    const body = JSON.parse(g.body.toString()) as Obj;
    let udms: Obj[];
    if (g.url === IMPORT_PATH) {
      if (Object.keys(body).join() !== 'inlineSource')
        return answer(res, 400, { error: { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' } });
      udms = (body['inlineSource']['events'] as Obj[]).map((e) => e['udm']);
    } else if (g.url === '/v2/udmevents:batchCreate') {
      if (body['customer_id'] !== CUSTOMER)
        return answer(res, 403, { error: { code: 403, message: 'customer mismatch', status: 'PERMISSION_DENIED' } });
      udms = body['events'] as Obj[];
    } else return answer(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
    for (let i = 0; i < udms.length; i++) {
      const p = udmProblem(udms[i]!);
      // "an error in one entity will cause the entire request to be rejected"
      if (p !== null) return answer(res, 400, { error: { code: 400, message: `events[${i}]: ${p}`, status: 'INVALID_ARGUMENT' } });
    }
    st.udm.push(...udms);
    answer(res, 200, g.url === IMPORT_PATH ? '' : {});
  };
  return { st, handler };
}

test('chronicle: events:import carries every UDM event of records and events; v2 batchCreate with customer_id', async (t) => {
  const s = await secretsContext();
  const { st, handler } = chronicleReceiver();
  const rx = await startReceiver(cert, handler);
  t.after(async () => {
    await rx.close();
    await s.dispose();
  });
  await s.set('chronicle-token', TOKEN);
  const cfg: ChronicleConfig = {
    url: `${rx.url}${IMPORT_PATH}`,
    tls: { pin_sha256: cert.pinBase64 },
    token_secret: 'secret:chronicle-token',
  };
  assert.deepEqual(chronicleKind.validate?.(cfg), []);
  const sink = await chronicleKind.open(cfg, s.ctx);
  const { records } = ledger(50);
  const items = [...recordItemsAs(records, 'chronicle_connector', 'udm'), ...eventItems(events(10), 'chronicle_connector', 'udm')];
  const r = await sink.send(items, signal());
  assert.equal(r.result, 'delivered', r.error);
  assert.equal(st.udm.length, 60);
  assert.deepEqual(st.udm, items.map((i) => JSON.parse(i.line)));
  assert.equal(st.udm[0]!['additional']['svc.audit.seq'], 1);
  await sink.close();
  const v2cfg: ChronicleConfig = {
    url: `${rx.url}/v2/udmevents:batchCreate`,
    api: 'v2_batch_create',
    customer_id: CUSTOMER,
    tls: { pin_sha256: cert.pinBase64 },
    token_secret: 'secret:chronicle-token',
  };
  assert.deepEqual(chronicleKind.validate?.(v2cfg), []);
  const v2 = await chronicleKind.open(v2cfg, s.ctx);
  assert.equal((await v2.send(items.slice(0, 5), signal())).result, 'delivered');
  assert.equal(st.udm.length, 65);
  await v2.close();
});

test(
  'chronicle: one invalid event fails the batch with the Status message; 503 retries with Retry-After; 401 fails; down and wrong ' +
    'certificate retry with nothing sent; deleted token fails closed',
  async (t) => {
    const s = await secretsContext();
    const { st, handler } = chronicleReceiver();
    const rx = await startReceiver(cert, handler);
    t.after(async () => {
      await rx.close();
      await s.dispose();
    });
    await s.set('chronicle-token', TOKEN);
    await s.set('stale', 'ya29.expired');
    const url = `${rx.url}${IMPORT_PATH}`;
    const sink = await chronicleKind.open({ url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:chronicle-token' }, s.ctx);
    const items = eventItems(events(4), 'chronicle_connector', 'udm');
    const broken = [...items];
    broken[2] = { ...broken[2]!, line: JSON.stringify({ ...JSON.parse(broken[2]!.line), metadata: { event_type: 'NOT_A_TYPE' } }) };
    const bad = await sink.send(broken, signal());
    assert.deepEqual([bad.result, bad.status], ['failed', 400]);
    assert.equal(bad.error, 'receiver answered 400: INVALID_ARGUMENT events[2]: metadata.event_type "NOT_A_TYPE" is invalid');
    assert.equal(st.udm.length, 0, 'all or nothing');
    st.status = 503;
    const busy = await sink.send(items, signal());
    assert.deepEqual([busy.result, busy.status, busy.retryAfterMs], ['retry', 503, 5000]);
    st.status = 0;
    const stale = await chronicleKind.open({ url, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:stale' }, s.ctx);
    const u = await stale.send(items, signal());
    assert.deepEqual([u.result, u.status], ['failed', 401]);
    assert.ok(!(u.error ?? '').includes('ya29'));
    await stale.close();
    const down = await chronicleKind.open(
      {
        url: `https://127.0.0.1:${await deadPort()}${IMPORT_PATH}`,
        tls: { pin_sha256: cert.pinBase64 },
        token_secret: 'secret:chronicle-token',
      },
      s.ctx,
    );
    assert.equal((await down.send(items, signal())).result, 'retry');
    await down.close();
    const other = makeCert();
    const rx2 = await startReceiver(other, handler);
    const wrong = await chronicleKind.open(
      { url: `${rx2.url}${IMPORT_PATH}`, tls: { pin_sha256: cert.pinBase64 }, token_secret: 'secret:chronicle-token' },
      s.ctx,
    );
    assert.equal((await wrong.send(items, signal())).result, 'retry');
    assert.equal(rx2.bodyBytes(), 0);
    await wrong.close();
    await rx2.close();
    await s.remove('chronicle-token');
    await assert.rejects(sink.send(items, signal()), SecretUnavailableError);
    await sink.close();
  },
);

test('chronicle: validate pins the method URL to the chosen API', () => {
  const v = chronicleKind.validate!;
  assert.match(v({ url: 'https://chronicle.us.rep.googleapis.com/v1/projects/p', token_secret: 'secret:t' }).join(';'), /events:import/);
  assert.match(
    v({
      url: 'https://malachiteingestion-pa.googleapis.com/v2/udmevents:batchCreate',
      api: 'v2_batch_create',
      token_secret: 'secret:t',
    }).join(';'),
    /customer_id is required/,
  );
  assert.deepEqual(
    v({
      url: 'https://chronicle.us.rep.googleapis.com/v1alpha/projects/p/locations/us/instances/i/events:import',
      token_secret: 'secret:t',
    }),
    [],
  );
});
