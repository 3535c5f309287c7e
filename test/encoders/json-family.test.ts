import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Encoder } from '../../src/encoders/encoder.js';
import { asimEncoder } from '../../src/encoders/asim.js';
import { ecsEncoder } from '../../src/encoders/ecs.js';
import { jsonEncoder, jsonProjectionEncoder } from '../../src/encoders/json.js';
import { INTEGRITY_FIELD_NAMES } from '../../src/encoders/ledger-fields.js';
import { ocsfEncoder } from '../../src/encoders/ocsf.js';
import { otlpLogRecordEncoder } from '../../src/encoders/otlp-log-record.js';
import { otlpEncoder, otlpEnvelopeEncoder } from '../../src/encoders/otlp.js';
import { udmEncoder } from '../../src/encoders/udm.js';
import { OPTS, event, hostileRecord, record } from './json-family.fixtures.js';

const RECORD_ENCODERS: Encoder[] = [
  otlpEncoder, otlpEnvelopeEncoder, otlpLogRecordEncoder, ocsfEncoder, jsonProjectionEncoder, asimEncoder, ecsEncoder, udmEncoder,
];
const EVENT_ENCODERS: Encoder[] = [
  otlpEncoder,
  otlpEnvelopeEncoder,
  ocsfEncoder,
  jsonEncoder,
  jsonProjectionEncoder,
  asimEncoder,
  ecsEncoder,
  udmEncoder,
];

/** One NDJSON line: one JSON object, no line terminator of any splitter, well-formed UTF-8. */
function assertOneObjectLine(line: string, label: string): Record<string, unknown> {
  assert.doesNotMatch(line, /[\r\n\u0085\u2028\u2029]/, label);
  assert.equal(Buffer.from(line, 'utf8').toString('utf8'), line, `${label}: not well-formed UTF-16/UTF-8`);
  const v: unknown = JSON.parse(line);
  assert.ok(v !== null && typeof v === 'object' && !Array.isArray(v), `${label}: not an object`);
  return v as Record<string, unknown>;
}

function leaves(v: unknown): unknown[] {
  if (v === null || typeof v !== 'object') return [v];
  return Object.values(v).flatMap(leaves);
}

const str = fc.string({ unit: 'binary', maxLength: 60 });
const scalar = fc.oneof(str, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));

describe('JSON-family encoders: shared NDJSON guarantees', () => {
  it('declare json:true and application/x-ndjson', () => {
    for (const e of new Set([...RECORD_ENCODERS, ...EVENT_ENCODERS])) {
      assert.equal(e.json, true, e.token);
      assert.equal(e.contentType, 'application/x-ndjson', e.token);
    }
    assert.deepEqual([otlpEncoder.token, otlpEnvelopeEncoder.token, otlpLogRecordEncoder.token, ocsfEncoder.token, jsonEncoder.token,
      jsonProjectionEncoder.token, asimEncoder.token, ecsEncoder.token, udmEncoder.token],
      ['otlp', 'otlp_envelope', 'otlp_log_record', 'ocsf', 'json', 'json', 'asim', 'ecs', 'udm']);
  });

  it('carry every integrity field of a ledger record verbatim in every format', () => {
    const r = record({ payload_hash: '5a'.repeat(32), seq: 1234567 });
    for (const e of RECORD_ENCODERS) {
      const vals = leaves(assertOneObjectLine(e.encodeRecord(r, OPTS), e.token));
      for (const f of INTEGRITY_FIELD_NAMES) {
        const want = r[f];
        assert.ok(vals.includes(want) || vals.includes(String(want)), `${e.token} lacks ${f}`);
      }
    }
  });

  it('property: any record → exactly one object per line, no raw CR/LF, in every format', () => {
    fc.assert(
      fc.property(str, str, str, str, str, fc.nat(), (actor, action, kind, target, meta, seq) => {
        const r = record({ actor, action, actor_kind: kind, target_kind: kind, target_id: target, meta, seq, occurred_at: action });
        for (const e of RECORD_ENCODERS) assertOneObjectLine(e.encodeRecord(r, OPTS), e.token);
        assert.equal(otlpEncoder.encodeRecord(r, OPTS), otlpEnvelopeEncoder.encodeRecord(r, OPTS));
      }),
      { numRuns: 150 },
    );
  });

  it('property: any event → exactly one object per line, no raw CR/LF, in every format', () => {
    fc.assert(
      fc.property(str, str, fc.dictionary(str, scalar, { maxKeys: 5 }), fc.option(str, { nil: undefined }), fc.jsonValue(),
        (type, title, fields, time, data) => {
          const e = event({ type, title, fields, time, raw: { data, [title]: type } });
          for (const enc of EVENT_ENCODERS) assertOneObjectLine(enc.encodeEvent!(e, OPTS), enc.token);
          assert.equal(otlpEncoder.encodeEvent!(e, OPTS), otlpEnvelopeEncoder.encodeEvent!(e, OPTS));
        }),
      { numRuns: 150 },
    );
  });

  it('hostile golden inputs stay one line in every format', () => {
    for (const e of RECORD_ENCODERS) assertOneObjectLine(e.encodeRecord(hostileRecord(), OPTS), e.token);
  });
});
