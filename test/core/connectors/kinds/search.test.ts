/**
 * `search` against a receiver implementing the Elasticsearch `_bulk` contract (NDJSON action and
 * document lines, `errors` + per-item `status`/`error`, op_type create conflicts, 429), where every
 * document is validated against the official ECS 9.4.0 field definitions of `@elastic/ecs`
 * (`EcsFlat`: every non-custom field exists, has its ECS type, allowed values, array fields).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { SecretUnavailableError } from '../../../../src/core/console/secrets-service.js';
import { bulkBody, indexName, searchKind } from '../../../../src/core/connectors/kinds/search.js';
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

type Field = { type: string; normalize: string[]; allowed_values?: Array<{ name: string }> };
const require = createRequire(import.meta.url);
const { EcsFlat, EcsVersion } = require('@elastic/ecs') as { EcsFlat: Record<string, Field>; EcsVersion: string };
const cert = makeCert();

function leaves(v: unknown, at = ''): Array<[string, unknown]> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return [[at, v]];
  return Object.entries(v as object).flatMap(([k, x]) => leaves(x, at === '' ? k : `${at}.${k}`));
}

function typeOk(type: string, v: unknown): boolean {
  switch (type) {
    case 'keyword': case 'constant_keyword': case 'wildcard': case 'match_only_text': case 'text':
      return typeof v === 'string';
    case 'long': case 'integer':
      return Number.isSafeInteger(v);
    case 'float': case 'double': case 'scaled_float':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'date':
      return (
        typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v))
      );
    case 'ip':
      return typeof v === 'string' && isIP(v) !== 0;
    default:
      return false;
  }
}

/** Problems of one document against ECS 9.4.0 (empty when it validates). Custom fields live under `svc.`. */
export function ecsProblems(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  if ((doc['ecs'] as { version?: string } | undefined)?.version !== EcsVersion) out.push(`ecs.version is not ${EcsVersion}`);
  for (const [path, value] of leaves(doc)) {
    if (path === 'svc' || path.startsWith('svc.')) continue;
    const f = EcsFlat[path];
    if (f === undefined) {
      out.push(`${path}: not an ECS ${EcsVersion} field`);
      continue;
    }
    const isArray = f.normalize.includes('array');
    if (isArray && !Array.isArray(value)) out.push(`${path}: ECS wants an array`);
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (!typeOk(f.type, v)) out.push(`${path}: ${JSON.stringify(v)} is not ${f.type}`);
      if (f.allowed_values && !f.allowed_values.some((a) => a.name === v))
        out.push(`${path}: ${JSON.stringify(v)} is not an allowed value`);
    }
  }
  return out;
}

/** An `_bulk` receiver: validates every document against ECS, stores by index and _id, answers per item. */
function bulkReceiver(apiKey: string) {
  const st = { docs: new Map<string, unknown>(), reject: new Set<string>(), busy: false, itemBusy: false, problems: [] as string[] };
  const handler = (g: Got, res: import('node:http').ServerResponse): void => {
    if (g.headers['authorization'] !== `ApiKey ${apiKey}`)
      return answer(res, 401, { error: { type: 'security_exception', reason: 'unable to authenticate' }, status: 401 });
    if (!g.url.startsWith('/_bulk')) return answer(res, 404, { error: 'no handler' });
    if (g.headers['content-type'] !== 'application/x-ndjson')
      return answer(res, 406, { error: 'Content-Type header is not supported', status: 406 });
    if (st.busy)
      return answer(
        res,
        429,
        { error: { type: 'es_rejected_execution_exception', reason: 'rejected execution' }, status: 429 },
        { 'retry-after': '2' },
      );
    const text = g.body.toString('utf8');
    if (!text.endsWith('\n'))
      return answer(res, 400, {
        error: { type: 'illegal_argument_exception', reason: 'The bulk request must be terminated by a newline [\\n]' },
        status: 400,
      });
    const lines = text.slice(0, -1).split('\n');
    const items: unknown[] = [];
    let errors = false;
    for (let i = 0; i < lines.length; i += 2) {
      const action = JSON.parse(lines[i] as string) as Record<string, { _index: string; _id: string }>;
      const [op, meta] = Object.entries(action)[0] as [string, { _index: string; _id: string }];
      const doc = JSON.parse(lines[i + 1] as string) as Record<string, unknown>;
      const key = `${meta._index}/${meta._id}`;
      const problems = ecsProblems(doc);
      st.problems.push(...problems);
      let item: Record<string, unknown>;
      if (st.itemBusy && i === 2) item = { status: 429, error: { type: 'es_rejected_execution_exception', reason: 'queue full' } };
      else if (problems.length > 0 || st.reject.has(meta._id))
        item = { status: 400, error: { type: 'mapper_parsing_exception', reason: problems[0] ?? `failed to parse document ${meta._id}` } };
      else if (op === 'create' && st.docs.has(key))
        item = {
          status: 409,
          error: { type: 'version_conflict_engine_exception', reason: `[${meta._id}]: version conflict, document already exists` },
        };
      else {
        const existed = st.docs.has(key);
        st.docs.set(key, doc);
        item = { status: existed ? 200 : 201, result: existed ? 'updated' : 'created', _version: 1 };
      }
      if ('error' in item) errors = true;
      items.push({ [op]: { _index: meta._index, _id: meta._id, ...item } });
    }
    answer(res, 200, { took: 3, errors, items });
  };
  return { st, handler };
}

test(
  'search: every ECS document of ledger records and events validates against @elastic/ecs 9.4.0 and is indexed by _id under the dated ' +
    'index',
  async (t) => {
    assert.equal(EcsVersion, '9.4.0');
    const s = await secretsContext();
    const { st, handler } = bulkReceiver('c2VjcmV0OmtleQ==');
    const rx = await startReceiver(cert, handler);
    t.after(async () => {
      await rx.close();
      await s.dispose();
    });
    await s.set('es-key', 'c2VjcmV0OmtleQ==');
    const cfg = { url: rx.url, tls: { pin_sha256: cert.pinBase64 }, api_key_secret: 'secret:es-key', index: 'svc-audit-%{yyyy.MM.dd}' };
    assert.deepEqual(searchKind.validate?.(cfg), []);
    const sink = await searchKind.open(cfg, s.ctx);
    const { records } = ledger(120);
    const items = [...recordItemsAs(records, 'search_connector', 'ecs'), ...eventItems(events(20), 'search_connector', 'ecs')];
    const r = await sink.send(items, signal());
    assert.equal(r.result, 'delivered', r.error);
    assert.equal(r.rejected, undefined);
    assert.deepEqual(st.problems, [], 'every document validates against ECS 9.4.0');
    assert.equal(st.docs.size, 140);
    for (const it of items) assert.ok(st.docs.has(`${indexName('svc-audit-%{yyyy.MM.dd}', it.time)}/${it.id}`), it.id);
    // re-sent: the same _ids are overwritten, not duplicated
    assert.equal((await sink.send(items, signal())).result, 'delivered');
    assert.equal(st.docs.size, 140);
    await sink.close();
  },
);

test('search: the validator has teeth — a non-ECS field, a wrong type and a value outside the allowed list are caught', () => {
  const good = JSON.parse(recordItemsAs(ledger(1).records, 'search_connector', 'ecs')[0]!.line) as Record<string, any>;
  assert.deepEqual(ecsProblems(good), []);
  assert.match(ecsProblems({ ...good, actor: 'x' }).join(';'), /actor: not an ECS/);
  assert.match(ecsProblems({ ...good, event: { ...good['event'], sequence: '7' } }).join(';'), /event.sequence: "7" is not long/);
  assert.match(
    ecsProblems({ ...good, event: { ...good['event'], kind: 'audit' } }).join(';'),
    /event.kind: "audit" is not an allowed value/,
  );
  assert.match(ecsProblems({ ...good, event: { ...good['event'], category: 'iam' } }).join(';'), /event.category: ECS wants an array/);
});

test(
  'search: errors:true — item errors become rejections with type and reason; a 429 item or a 429 answer retries; op_type create ' +
    'conflicts count as delivered',
  async (t) => {
    const s = await secretsContext();
    const { st, handler } = bulkReceiver('k');
    const rx = await startReceiver(cert, handler);
    t.after(async () => {
      await rx.close();
      await s.dispose();
    });
    await s.set('es-key', 'k');
    const sink = await searchKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 }, api_key_secret: 'secret:es-key' }, s.ctx);
    const items = eventItems(events(6), 'search_connector', 'ecs');
    st.reject.add(items[1]!.id);
    st.reject.add(items[4]!.id);
    const r = await sink.send(items, signal());
    assert.equal(r.result, 'delivered');
    assert.deepEqual(
      r.rejected?.map((x) => x.index),
      [1, 4],
    );
    assert.match(r.rejected![0]!.error, /^400 mapper_parsing_exception: failed to parse document evt-0001/);
    st.reject.clear();
    st.itemBusy = true;
    const ib = await sink.send(items, signal());
    assert.deepEqual([ib.result, ib.status], ['retry', 429]);
    st.itemBusy = false;
    st.busy = true;
    const b = await sink.send(items, signal());
    assert.deepEqual([b.result, b.status, b.retryAfterMs], ['retry', 429, 2000]);
    st.busy = false;
    const create = await searchKind.open(
      { url: rx.url, tls: { pin_sha256: cert.pinBase64 }, api_key_secret: 'secret:es-key', op_type: 'create', index: 'ds-svc' },
      s.ctx,
    );
    assert.equal((await create.send(items, signal())).result, 'delivered');
    const again = await create.send(items, signal());
    assert.deepEqual([again.result, again.rejected], ['delivered', undefined], 'already indexed: not a rejection');
    assert.match(rx.got.at(-1)!.body.toString().split('\n')[0]!, /^\{"create":\{"_index":"ds-svc","_id":"evt-0000"\}\}$/);
    await s.set('es-key', 'wrong');
    const unauth = await sink.send(items, signal());
    assert.deepEqual([unauth.result, unauth.status], ['failed', 401]);
    assert.match(unauth.error ?? '', /security_exception/);
    await s.remove('es-key');
    await assert.rejects(sink.send(items, signal()), SecretUnavailableError);
    await sink.close();
    await create.close();
  },
);

test('search: down retries, wrong certificate sends nothing; bulk body framing; config rules', async (t) => {
  const s = await secretsContext();
  t.after(() => s.dispose());
  const items = eventItems(events(2), 'search_connector', 'ecs');
  const down = await searchKind.open({ url: `https://127.0.0.1:${await deadPort()}` , tls: { pin_sha256: cert.pinBase64 } }, s.ctx);
  assert.equal((await down.send(items, signal())).result, 'retry');
  await down.close();
  const other = makeCert();
  const rx = await startReceiver(other, (_g, res) => answer(res, 200, { errors: false, items: [] }));
  t.after(() => rx.close());
  const wrong = await searchKind.open({ url: rx.url, tls: { pin_sha256: cert.pinBase64 } }, s.ctx);
  assert.equal((await wrong.send(items, signal())).result, 'retry');
  assert.equal(rx.bodyBytes(), 0);
  await wrong.close();
  const body = bulkBody(items, { url: 'https://x', index: 'a-%{yyyy}-%{MM}-%{dd}' });
  assert.equal(body, items.map((i) => `{"index":{"_index":"a-2026-11-27","_id":"${i.id}"}}\n${i.line}\n`).join(''));
  assert.equal(indexName('svc-%{yyyy.MM.dd}', undefined), 'svc-undated');
  const v = searchKind.validate!;
  assert.match(v({ url: 'https://es:9200', api_key_secret: 'secret:a', username: 'u', password_secret: 'secret:p' }).join(';'), /not both/);
  assert.match(v({ url: 'https://es:9200', username: 'u' }).join(';'), /go together/);
  assert.equal(searchKind.format && 'surface' in searchKind.format ? searchKind.format.surface : '', 'search_connector');
});
