import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { otlpLogRecordEncoder } from '../../src/encoders/otlp-log-record.js';
import { otlpEncoder } from '../../src/encoders/otlp.js';
import { OPTS, hostileRecord, record } from './json-family.fixtures.js';
import { LogRecord, SEVERITY_NUMBERS, hexIdsToBase64, nonCamelKeys } from './otlp-proto-registry.js';

type Obj = Record<string, any>;

function decode(line: string): { json: Obj; msg: Obj } {
  assert.doesNotMatch(line, /[\r\n]/);
  const json = JSON.parse(line) as Obj;
  assert.deepEqual(nonCamelKeys(json), []);
  assert.ok(SEVERITY_NUMBERS.includes(json['severityNumber']));
  return { json, msg: fromJson(LogRecord, hexIdsToBase64(json) as JsonValue) as Obj };
}

/** occurred_at → expected timeUnixNano, written from spec OTLP rule 4 (not computed by the encoder). */
const EXTREMES: ReadonlyArray<[string, string]> = [
  ['0001-01-01T00:00:00.000000000Z', '0'],
  ['1969-12-31T23:59:59.999999999Z', '0'],
  ['1970-01-01T00:00:00.000000000Z', '0'],
  ['1970-01-01T00:00:00.000000001Z', '1'],
  ['2025-03-14T15:09:26.535897932Z', '1741964966535897932'],
  ['2262-04-11T23:47:16.854775807Z', '9223372036854775807'],
  ['2262-04-11T23:47:16.854775808Z', '9223372036854775808'],
  ['2554-07-21T23:34:33.709551615Z', '18446744073709551615'],
  ['2554-07-21T23:34:33.709551616Z', '0'],
  ['9999-12-31T23:59:59.999999999Z', '0'],
];

describe('otlp_log_record encoder', () => {
  it('emits one bare LogRecord per line, accepted by the strict official decoder', () => {
    for (const r of [record(), hostileRecord(), record({ payload_hash: 'aa'.repeat(32) })]) {
      const line = otlpLogRecordEncoder.encodeRecord(r, OPTS);
      const { json, msg } = decode(line);
      assert.equal(Object.hasOwn(json, 'resourceLogs'), false);
      assert.equal(msg['body']['value']['value'], r.action.toString());
      // the bare record is exactly the record inside the otlp envelope
      const env = JSON.parse(otlpEncoder.encodeRecord(r, OPTS)) as Obj;
      assert.deepEqual(env['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0], json);
    }
  });

  it('encodes the extreme instants of OTLP rule 4 exactly, keeping the original text', () => {
    for (const [occurred_at, expected] of EXTREMES) {
      const { json, msg } = decode(otlpLogRecordEncoder.encodeRecord(record({ occurred_at }), OPTS));
      assert.equal(json['timeUnixNano'], expected, occurred_at);
      assert.equal(json['observedTimeUnixNano'], expected, occurred_at);
      assert.equal(msg['timeUnixNano'], BigInt(expected));
      const orig = (json['attributes'] as Obj[]).find((a) => a['key'] === 'svc.audit.occurred_at');
      assert.deepEqual(orig?.['value'], { stringValue: occurred_at });
    }
  });

  it('has no encodeEvent: otlp_log_record is a ledger-export-only format', () => {
    assert.equal(otlpLogRecordEncoder.encodeEvent, undefined);
    assert.equal(otlpLogRecordEncoder.json, true);
    assert.equal(otlpLogRecordEncoder.contentType, 'application/x-ndjson');
  });

  it('property: any record yields one strict-decodable object without raw CR/LF', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }), (a, b) => {
        const line = otlpLogRecordEncoder.encodeRecord(record({ action: a, target_id: b, meta: b, occurred_at: a }), OPTS);
        const { json } = decode(line);
        assert.equal(typeof json, 'object');
      }),
      { numRuns: 300 },
    );
  });
});
