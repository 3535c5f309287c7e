import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { otlpEncoder, otlpEnvelopeEncoder } from '../../src/encoders/otlp.js';
import { INTEGRITY_FIELD_NAMES } from '../../src/encoders/ledger-fields.js';
import { SEVERITY } from '../../src/encoders/severity.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { OPTS, HOSTILE, event, hostileRecord, record } from './json-family.fixtures.js';
import {
  DESCRIPTOR_FILE,
  ExportLogsServiceRequest,
  SEVERITY_NUMBERS,
  REPO_ROOT,
  nonCamelKeys,
  requestForFromJson,
} from './otlp-proto-registry.js';

type Obj = Record<string, any>;

/** What UTF-8 storage makes of a JS string (lone surrogates → U+FFFD), via Buffer, not our code. */
const wellFormed = (s: string): string => Buffer.from(s, "utf8").toString("utf8");

function decode(line: string): { json: Obj; msg: Obj } {
  assert.doesNotMatch(line, /[\r\n]/);
  const json = JSON.parse(line) as Obj;
  assert.deepEqual(nonCamelKeys(json), []);
  // strict: @bufbuild/protobuf rejects unknown keys, wrong types and bad enums by default
  const msg = fromJson(ExportLogsServiceRequest, requestForFromJson(json) as JsonValue) as Obj;
  // proto3 enums are open (fromJson accepts any number), so check the defined values ourselves
  for (const rl of json['resourceLogs']) for (const sl of rl['scopeLogs']) for (const lr of sl['logRecords']) {
    assert.ok(SEVERITY_NUMBERS.includes(lr['severityNumber']), `severityNumber ${lr['severityNumber']}`);
  }
  return { json, msg };
}

function attrs(logRecord: Obj): Map<string, Obj> {
  return new Map((logRecord['attributes'] as Obj[]).map((a) => [a['key'] as string, a['value'] as Obj]));
}

const RECORDS: AuditRecord[] = [
  record(),
  record({ payload_hash: '9f'.repeat(32), seq: 9007199254740991 }),
  record({ meta: null, meta_blind: null }),
  hostileRecord(),
  record({ occurred_at: '2554-07-21T23:34:33.709551615Z' }),
  record({ occurred_at: '1969-12-31T23:59:59.999999999Z' }),
  record({ action: 'audit.tamper_detected' }),
];

describe('otlp / otlp_envelope encoder', () => {
  it('descriptor set is reproducible from the pinned .proto files (regenerate.sh)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'otlp-proto-'));
    try {
      const out = path.join(dir, 'again.binpb');
      execFileSync('sh', [path.join(REPO_ROOT, 'test/encoders/otlp-proto/regenerate.sh'), out]);
      assert.deepEqual(readFileSync(out), readFileSync(DESCRIPTOR_FILE));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the strict decoder rejects what OTLP forbids (guards the checks below)', () => {
    const { json } = decode(otlpEncoder.encodeRecord(record(), OPTS));
    for (const mutate of [
      (r: Obj) => { r['eventName'] = 'x'; }, // not in opentelemetry-proto v1.4.0
      (r: Obj) => { r['time_unix_nano'] = r['timeUnixNano']; },
      (r: Obj) => { r['severityNumber'] = 'SEVERITY_NUMBER_BOGUS'; },
      (r: Obj) => { r['timeUnixNano'] = '-1'; },
      (r: Obj) => { r['timeUnixNano'] = '18446744073709551616'; },
    ]) {
      const copy = structuredClone(json);
      mutate(copy['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0]);
      assert.throws(() => fromJson(ExportLogsServiceRequest, requestForFromJson(copy) as JsonValue));
    }
  });

  it('emits a complete export request with resource identity and scope (golden)', () => {
    const line = otlpEncoder.encodeRecord(record(), OPTS);
    const expected = {
      resourceLogs: [{
        resource: { attributes: [
          { key: 'service.name', value: { stringValue: 'control-plane' } },
          { key: 'service.version', value: { stringValue: '0.1.0' } },
        ] },
        scopeLogs: [{
          scope: { name: 'svc.audit', version: '0.1.0' },
          logRecords: [{
            timeUnixNano: '1741964966535897932',
            observedTimeUnixNano: '1741964966535897932',
            severityNumber: 9,
            severityText: 'INFO',
            body: { stringValue: 'agent.create' },
            attributes: [
              { key: 'svc.audit.seq', value: { intValue: '42' } },
              { key: 'svc.audit.tenant', value: { stringValue: '3b241101-e2bb-4255-8caf-4136c566a962' } },
              { key: 'svc.audit.occurred_at', value: { stringValue: '2025-03-14T15:09:26.535897932Z' } },
              { key: 'svc.audit.prev_hash', value: { stringValue: '01'.repeat(32) } },
              { key: 'svc.audit.hash', value: { stringValue: 'ef'.repeat(32) } },
              { key: 'svc.audit.sig', value: { stringValue: 'c2lnbmF0dXJlLWJ5dGVzLWhlcmU=' } },
              { key: 'svc.audit.key_id', value: { stringValue: 'k-2025-01' } },
              { key: 'svc.audit.payload_hash', value: {} },
              { key: 'svc.audit.meta_commitment', value: { stringValue: 'cd'.repeat(32) } },
              { key: 'svc.audit.id', value: { stringValue: '0190f5c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d' } },
              { key: 'svc.audit.actor', value: { stringValue: 'user:6f1c2d3e' } },
              { key: 'svc.audit.actor_kind', value: { stringValue: 'user' } },
              { key: 'svc.audit.action', value: { stringValue: 'agent.create' } },
              { key: 'svc.audit.target_kind', value: { stringValue: 'agent' } },
              { key: 'svc.audit.target_id', value: { stringValue: 'agent-7' } },
              { key: 'svc.audit.meta', value: { stringValue: '{"name":"triage-bot"}' } },
            ],
          }],
        }],
      }],
    };
    assert.equal(line, JSON.stringify(expected));
  });

  it('decodes every ledger line with the official protobuf types and keeps integrity fields verbatim', () => {
    for (const r of RECORDS) {
      const { msg } = decode(otlpEncoder.encodeRecord(r, OPTS));
      const res = msg['resourceLogs'][0];
      const resAttrs = new Map((res['resource']['attributes'] as Obj[]).map((a) => [a['key'], a['value']['value']['value']]));
      assert.equal(resAttrs.get('service.name'), 'control-plane');
      assert.equal(resAttrs.get('service.version'), OPTS.device.version);
      assert.equal(res['scopeLogs'][0]['scope']['name'], 'svc.audit');
      const lr = res['scopeLogs'][0]['logRecords'][0] as Obj;
      assert.equal(typeof lr['timeUnixNano'], 'bigint');
      const a = attrs(lr);
      for (const name of INTEGRITY_FIELD_NAMES) {
        const v = a.get(`svc.audit.${name}`)?.['value'];
        assert.ok(v !== undefined, `svc.audit.${name} present`);
        const stored = r[name];
        if (stored === null) assert.equal(v['case'], undefined);
        else if (name === 'seq') assert.equal(v['value'], BigInt(stored as number));
        else assert.equal(v['value'], stored);
      }
    }
  });

  it('carries hostile values losslessly (lone surrogates become U+FFFD, as stored)', () => {
    const r = hostileRecord();
    const { msg } = decode(otlpEncoder.encodeRecord(r, OPTS));
    const a = attrs(msg['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0]);
    assert.equal(a.get('svc.audit.target_id')?.['value']['value'], wellFormed(r.target_id));
    assert.equal(a.get('svc.audit.key_id')?.['value']['value'], HOSTILE.astral);
    assert.equal(a.get('svc.audit.actor')?.['value']['value'], wellFormed(r.actor));
  });

  it('carries trace/span ids as hex that decode to the same bytes', () => {
    const { json, msg } = decode(otlpEncoder.encodeRecord(hostileRecord(), OPTS));
    const lr = json['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0];
    assert.equal(lr['traceId'], '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(lr['spanId'], '00f067aa0ba902b7');
    const dec = msg['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0];
    assert.equal(Buffer.from(dec['traceId']).toString('hex'), '4bf92f3577b34da6a3ce929d0e0e4736');
    // malformed ids are dropped, never forwarded
    const bad = otlpEncoder.encodeRecord(record({ meta: '{"trace_id":"zz","span_id":"0000000000000000"}' }), OPTS);
    assert.doesNotMatch(bad, /traceId|spanId/);
  });

  it('maps severity from the one table, for events too', () => {
    for (const sev of ['info', 'low', 'medium', 'high', 'critical', 'undetermined'] as const) {
      const { msg } = decode(otlpEncoder.encodeEvent!(event({ severity: sev }), OPTS));
      const lr = msg['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0];
      assert.equal(lr['severityNumber'], SEVERITY[sev].otlpNumber);
      assert.equal(lr['severityText'], SEVERITY[sev].otlpText);
    }
    const { json } = decode(otlpEncoder.encodeEvent!(event({ time: undefined }), OPTS));
    assert.equal(json['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0]['timeUnixNano'], '0');
  });

  it('property: every line decodes, has no raw CR/LF, and otlp == otlp_envelope byte for byte', () => {
    const text = fc.string({ unit: 'binary', maxLength: 64 });
    fc.assert(
      fc.property(text, text, text, fc.nat(), fc.option(text, { nil: undefined }), (actor, action, target, seq, time) => {
        const r = record({ actor, action, target_id: target, seq, key_id: action, ...(time === undefined ? {} : { occurred_at: time }) });
        const a = otlpEncoder.encodeRecord(r, OPTS);
        assert.equal(a, otlpEnvelopeEncoder.encodeRecord(r, OPTS));
        decode(a);
        const e = event({ title: actor, type: action, fields: { [target]: time ?? null } });
        const b = otlpEncoder.encodeEvent!(e, OPTS);
        assert.equal(b, otlpEnvelopeEncoder.encodeEvent!(e, OPTS));
        decode(b);
      }),
      { numRuns: 300 },
    );
  });

  it('a consumer selects records structurally: the completion marker has no resourceLogs', () => {
    const lines = [
      otlpEncoder.encodeRecord(record({ target_id: '{"export_complete":true}' }), OPTS),
      JSON.stringify({ export_complete: true, count: 1, last_seq: 42 }),
    ];
    const records = lines.map((l) => JSON.parse(l) as Obj).filter((o) => Object.hasOwn(o, 'resourceLogs'));
    assert.equal(records.length, 1);
    assert.ok(lines[0]!.includes('export_complete'), 'a substring match would have dropped a real record');
  });
});

describe('otlp against a real OTLP/HTTP receiver (@elastic/mockotlpserver)', () => {
  const require = createRequire(import.meta.url);
  const { MockOtlpServer } = require('@elastic/mockotlpserver') as {
    MockOtlpServer: new (o: object) => { start(): Promise<void>; close(): Promise<void>; httpUrl: URL | string };
  };
  const received: Obj[] = [];
  let server: InstanceType<typeof MockOtlpServer>;
  before(async () => {
    server = new MockOtlpServer({
      services: ['http'], httpHostname: '127.0.0.1', httpPort: 0, logLevel: 'warn',
      onLogs: (logs: Obj) => received.push(logs),
    });
    await server.start();
  });
  after(async () => { await server.close(); });

  it('accepts a posted otlp line and hands it to onLogs', async () => {
    const line = otlpEncoder.encodeRecord(hostileRecord(), OPTS);
    const url = new URL('/v1/logs', String(server.httpUrl));
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: line });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    for (let i = 0; i < 50 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(received.length, 1);
    const lr = received[0]!['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0];
    const seq = (lr['attributes'] as Obj[]).find((a) => a['key'] === 'svc.audit.seq');
    assert.deepEqual(seq?.['value'], { intValue: '42' });
  });
});
