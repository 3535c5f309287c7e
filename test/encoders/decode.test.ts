import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { acceptedTokens, encoderFor } from '../../src/encoders/registry.js';
import { syslogCefEncoder, syslogLeefEncoder } from '../../src/encoders/syslog.js';
import { ExportDecodeError, decodeLine, detectFormat, type FileFormat } from '../../src/encoders/decode/index.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { SYSLOG_OPTS, baseRecord, hostileRecord, recordArb } from './fixtures/records.js';

/** What a verifier can get back from an export line: everything but the meta blind, which exports do not carry. */
const exported = (r: AuditRecord): AuditRecord => ({ ...r, meta_blind: null });

function decodeAs(format: FileFormat, line: string): AuditRecord {
  const out = decodeLine(format, line);
  assert.equal(out.kind, 'record', line.slice(0, 80));
  return (out as { record: AuditRecord }).record;
}

test('every ledger export format decodes back to the record it encoded, hostile values included', () => {
  const formats = acceptedTokens('ledger_export');
  assert.deepEqual([...formats].sort(), ['cef', 'leef', 'ocsf', 'otlp', 'otlp_envelope', 'otlp_log_record', 'syslog']);
  fc.assert(
    fc.property(recordArb, (r) => {
      for (const token of formats) {
        const line = encoderFor('ledger_export', token).encodeRecord(r, SYSLOG_OPTS);
        const format = detectFormat(line);
        assert.equal(format, token === 'otlp' ? 'otlp_envelope' : token, `${token} is recognised from its first line`);
        assert.deepEqual(decodeAs(format as FileFormat, line), exported(r), token);
      }
    }),
    { numRuns: 150 },
  );
  for (const r of [baseRecord(), hostileRecord()]) {
    for (const token of formats) {
      const line = encoderFor('ledger_export', token).encodeRecord(r, SYSLOG_OPTS);
      assert.deepEqual(decodeAs(detectFormat(line) as FileFormat, line), exported(r), token);
    }
  }
});

test('an RFC 5424 frame carrying a CEF or LEEF line (connector syslog) decodes as its carried line', () => {
  const r = hostileRecord();
  for (const enc of [syslogCefEncoder, syslogLeefEncoder]) {
    const line = enc.encodeRecord(r, SYSLOG_OPTS);
    assert.equal(detectFormat(line), 'syslog');
    assert.deepEqual(decodeAs('syslog', line), exported(r));
  }
});

test('served records (GET /v1/audit NDJSON) keep their meta blind; terminators of both kinds are read', () => {
  const r = baseRecord();
  const line = JSON.stringify(r);
  assert.equal(detectFormat(line), 'records');
  assert.deepEqual(decodeAs('records', line), r);
  assert.deepEqual(decodeLine('cef', '# export-complete count=3 last_seq=42'), { kind: 'terminator', count: 3, lastSeq: 42 });
  assert.deepEqual(decodeLine('ocsf', '{"export_complete":true,"count":0,"last_seq":0}'), { kind: 'terminator', count: 0, lastSeq: 0 });
  assert.deepEqual(decodeLine('leef', ''), { kind: 'blank' });
  assert.equal(detectFormat('hello'), null);
  assert.equal(detectFormat('{"a":1}'), null);
});

test('a line that lost a field, its wire encoding or its shape is refused with the reason', () => {
  const r = baseRecord();
  const cef = encoderFor('ledger_export', 'cef').encodeRecord(r, SYSLOG_OPTS);
  const cases: Array<[FileFormat, string, RegExp]> = [
    ['cef', cef.replace(/ olvHash=[0-9a-f]+/, ''), /no hash/],
    ['cef', cef.replace('olvWireEnc=pct-c0-v1', 'olvWireEnc=none'), /wire encoding is "none"/],
    ['cef', cef.replace(/olvSeq=\d+/, 'olvSeq=4x'), /seq "4x" is not a positive integer/],
    ['cef', cef.replace('olvTargetId=', 'olvTargetId=%G1'), /olvTargetId: pct-c0-v1/],
    ['cef', 'CEF:0|svc|control-plane', /header has/],
    ['leef', 'CEF:0|a', /not a LEEF:2.0 line/],
    ['syslog', '<134>1 - - svc - audit [other@1 a="b"]', /no \[svc@32473/],
    ['ocsf', '{"class_uid":6003}', /no unmapped object/],
    ['otlp_envelope', '{"resourceLogs":[]}', /exactly one/],
    ['otlp_log_record', '{not json', /not JSON/],
  ];
  for (const [format, line, reason] of cases) {
    assert.throws(
      () => decodeLine(format, line),
      (err: Error) => err instanceof ExportDecodeError && reason.test(err.message),
      `${format}: ${line.slice(0, 60)}`,
    );
  }
});
