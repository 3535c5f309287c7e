/** Directory source, item parsing, config file, backoff and the collector's flag refusals. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DirSource } from '../../src/collector/dir-source.js';
import { parseItem, toBatchLists } from '../../src/collector/items.js';
import { parseCollectorConfig, CollectorConfigError } from '../../src/collector/config.js';
import { Backoff } from '../../src/collector/backoff.js';
import { resolveCollectorOptions, CollectorUsageError } from '../../src/collector/options.js';

test('dir source: each file once, arrays split across reads, the cursor resumes, gone files are forgotten', () => {
  const d = mkdtempSync(path.join(tmpdir(), 'svc-dir-'));
  try {
    writeFileSync(path.join(d, 'a.json'), JSON.stringify([{ n: 1 }, { n: 2 }, { n: 3 }]));
    writeFileSync(path.join(d, 'b.json'), JSON.stringify({ n: 4 }));
    writeFileSync(path.join(d, 'bad.json'), '{nope');
    writeFileSync(path.join(d, 'ignored.txt'), 'x');
    const s = new DirSource(d);
    const first = s.read(2);
    assert.deepEqual(first.records, [{ n: 1 }, { n: 2 }]);
    const resumed = new DirSource(d, first.cursor);
    const rest = resumed.read(100);
    assert.deepEqual(rest.records, [{ n: 3 }, { n: 4 }]);
    assert.equal(rest.invalid.length, 1);
    assert.deepEqual(resumed.read(100).records, []);
    rmSync(path.join(d, 'a.json'));
    assert.equal(resumed.read(100).cursor.done.some((k) => k.startsWith('a.json:')), false);
    writeFileSync(path.join(d, 'c.json'), JSON.stringify({ n: 5 }));
    assert.deepEqual(resumed.read(100).records, [{ n: 5 }]);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('items: kind picks the list, only proto fields are kept, unknown enum strings pass to the core', () => {
  const e = parseItem({ origin_kind: 'robot', resource_ref: 'x', extra: 1, count: 2 });
  assert.deepEqual(e.item, { kind: 'edge', fields: { origin_kind: 'robot', resource_ref: 'x', count: 2 } });
  assert.match(parseItem({ kind: 'weird' }).error as string, /unknown kind/);
  assert.match(parseItem([1]).error as string, /not a JSON object/);
  assert.match(parseItem({ kind: 'cost', input_tokens: -1 }).error as string, /non-negative/);
  const lists = toBatchLists([
    e.item!,
    parseItem({ kind: 'finding', rule: 'r' }).item!,
    parseItem({ kind: 'cost', agent: 'a', input_tokens: '12' }).item!,
  ]);
  assert.equal(lists.edges.length, 1);
  assert.deepEqual(lists.findings, [{ rule: 'r' }]);
  assert.deepEqual(lists.costs, [{ agent: 'a', input_tokens: 12 }]);
});

test('config: sources resolved against the file, defaults, refusals', () => {
  const c = parseCollectorConfig(
    'name: edge-1\nsources:\n  - { type: jsonl, path: logs/a.jsonl }\n  - { type: dir, path: /abs/dir }\n',
    '/etc/svc',
  );
  assert.equal(c.name, 'edge-1');
  assert.deepEqual(c.sources.map((s) => s.path), ['/etc/svc/logs/a.jsonl', '/abs/dir']);
  assert.equal(c.sources[0]?.name, 'jsonl:/etc/svc/logs/a.jsonl');
  assert.equal(c.batchMaxItems, 500);
  assert.throws(() => parseCollectorConfig('sources: []', '/'), CollectorConfigError);
  assert.throws(() => parseCollectorConfig('sources: [{type: kafka, path: x}]', '/'), /jsonl" or "dir/);
  assert.throws(() => parseCollectorConfig('sources: [{type: dir, path: x}]\nextra: 1', '/'), /unknown config key/);
  assert.throws(() => parseCollectorConfig('sources: [{type: dir, path: x}, {type: dir, path: x}]', '/'), /two sources/);
});

test('backoff: full jitter under an exponential ceiling, capped, reset', () => {
  const b = new Backoff({ baseMs: 100, capMs: 1000, random: () => 0.999 });
  const seq = Array.from({ length: 6 }, () => b.next());
  assert.deepEqual(seq, [99, 199, 399, 799, 999, 999]);
  b.reset();
  assert.equal(b.next(), 99);
  const r = new Backoff({ baseMs: 100, capMs: 1000 });
  for (let i = 0; i < 50; i++) {
    const v = r.next();
    assert.ok(v >= 0 && v <= 1000);
  }
});

test('flags: the token never goes over plaintext without --insecure; required flags; contradictions', () => {
  const d = mkdtempSync(path.join(tmpdir(), 'svc-flags-'));
  try {
    const tokenFile = path.join(d, 'token');
    writeFileSync(tokenFile, 'svck_x_y\n');
    const base = { coreAddr: '127.0.0.1:8444', tokenFile, config: path.join(d, 'c.yaml'), spoolDir: d };
    const ok = resolveCollectorOptions(base, {});
    assert.equal(ok.token, 'svck_x_y');
    assert.deepEqual(ok.tls, {});
    assert.equal(ok.coreAddr, '127.0.0.1:8444');
    assert.throws(
      () => resolveCollectorOptions({ ...base, coreAddr: 'grpc://127.0.0.1:8444' }, {}),
      /refusing to send the bearer token over plaintext/,
    );
    assert.equal(resolveCollectorOptions({ ...base, coreAddr: 'grpc://127.0.0.1:8444', insecure: true }, {}).tls, null);
    assert.throws(() => resolveCollectorOptions({ ...base, coreAddr: undefined }, {}), /--core-addr is required/);
    assert.throws(() => resolveCollectorOptions({ ...base, tokenFile: undefined }, {}), /SERVICE_INGEST_TOKEN/);
    assert.equal(resolveCollectorOptions({ ...base, tokenFile: undefined }, { SERVICE_INGEST_TOKEN: 'svck_env' }).token, 'svck_env');
    assert.throws(() => resolveCollectorOptions({ ...base, insecure: true, ca: 'x.pem' }, {}), /contradictory/);
    assert.throws(() => resolveCollectorOptions({ ...base, clientCert: 'c.pem' }, {}), /go together/);
    assert.throws(() => resolveCollectorOptions({ ...base, coreAddr: 'no-port' }, {}), CollectorUsageError);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
