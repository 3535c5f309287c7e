import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CorruptFormatTokenError, FormatTokenError, SURFACE_NAMES, acceptedTokens, defaultFormat, encoderFor, parseFormatToken, type Surface,
} from '../../src/encoders/registry.js';
import { cefEncoder } from '../../src/encoders/cef.js';
import { syslogEncoder } from '../../src/encoders/syslog.js';
import { parseSyslog } from './fixtures/text-parse.js';
import { SYSLOG_OPTS, baseRecord } from './fixtures/records.js';

// The spec's "Accepted tokens per surface" table, transcribed (plus ECS/UDM from the formats table).
const TABLE: Record<Surface, { tokens: string[]; dflt: string }> = {
  ledger_export: { tokens: ['cef', 'leef', 'syslog', 'otlp', 'otlp_envelope', 'otlp_log_record', 'ocsf'], dflt: 'cef' },
  eventing_sink: { tokens: ['ocsf', 'cef', 'leef', 'syslog', 'otlp', 'otlp_envelope', 'json'], dflt: 'ocsf' },
  notification: { tokens: ['json', 'cef', 'leef', 'syslog', 'otlp', 'otlp_envelope', 'ocsf', 'asim'], dflt: 'json' },
  syslog_connector: { tokens: ['syslog', 'cef', 'leef'], dflt: 'syslog' },
  search_connector: { tokens: ['ecs'], dflt: 'ecs' },
  chronicle_connector: { tokens: ['udm'], dflt: 'udm' },
};
const ALL = [...new Set(Object.values(TABLE).flatMap((t) => t.tokens))];

describe('format token registry (spec: Accepted tokens per surface, rules 1–3)', () => {
  it('accepts exactly the spec tokens per surface, with the spec defaults', () => {
    assert.deepEqual([...SURFACE_NAMES].sort(), Object.keys(TABLE).sort());
    for (const s of SURFACE_NAMES) {
      assert.deepEqual([...acceptedTokens(s)], TABLE[s].tokens, s);
      assert.equal(defaultFormat(s), TABLE[s].dflt);
      assert.equal(parseFormatToken(s, undefined), TABLE[s].dflt);
      for (const t of TABLE[s].tokens) assert.equal(parseFormatToken(s, t), t);
    }
  });

  it('rejects a token outside the surface with a bad_request naming that surface\'s tokens', () => {
    // Rule 1: no raw JSON passthrough on the ledger export.
    for (const [s, t] of [
      ['ledger_export', 'json'],
      ['syslog_connector', 'ocsf'],
      ['ledger_export', 'CEF'],
      ['notification', ' json'],
      ['eventing_sink', 'asim'],
      ['notification', 'otlp_log_record'],
      ['ledger_export', ''],
    ] as Array<[Surface, string]>) {
      assert.throws(
        () => parseFormatToken(s, t),
        (e: unknown) => {
          assert.ok(e instanceof FormatTokenError);
          assert.equal(e.code, 'bad_request');
          assert.equal(e.status, 400);
          assert.ok(e.message.includes(JSON.stringify(t)));
          for (const ok of TABLE[s].tokens) assert.ok(e.message.includes(ok), `${e.message} names ${ok}`);
          return true;
        },
      );
    }
  });

  it('property: any string is either an accepted token or rejected — never mapped to another format', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SURFACE_NAMES),
        fc.oneof(fc.constantFrom(...ALL, '__proto__', 'constructor', 'toString'), fc.string()),
        (s, t) => {
          if (TABLE[s].tokens.includes(t)) assert.equal(parseFormatToken(s, t), t);
          else assert.throws(() => parseFormatToken(s, t), FormatTokenError);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a corrupt stored value fails at encode time naming the corrupt spelling, never falling back to JSON', () => {
    for (const [s, t] of [
      ['notification', 'jsn'],
      ['eventing_sink', 'OCSF'],
      ['ledger_export', 'json'],
      ['syslog_connector', 'hasOwnProperty'],
    ] as Array<[Surface, string]>) {
      assert.throws(
        () => encoderFor(s, t),
        (e: unknown) => e instanceof CorruptFormatTokenError && e.message.includes(JSON.stringify(t)) && e.token === t,
      );
    }
  });

  it('maps every accepted token to an encoder for that token', () => {
    for (const s of SURFACE_NAMES) {
      for (const t of TABLE[s].tokens) {
        const enc = encoderFor(s, t);
        // otlp_envelope is a byte-identical alias of otlp.
        assert.equal(enc.token, t, `${s}/${t}`);
        assert.equal(typeof enc.encodeRecord, 'function');
      }
    }
    assert.equal(encoderFor('ledger_export', 'cef'), cefEncoder);
    assert.equal(encoderFor('ledger_export', 'syslog'), syslogEncoder);
    assert.notEqual(encoderFor('eventing_sink', 'json'), encoderFor('notification', 'json'), 'rule 2: raw envelope vs projection');
    const rec = baseRecord();
    assert.equal(
      encoderFor('ledger_export', 'otlp_envelope').encodeRecord(rec, SYSLOG_OPTS),
      encoderFor('ledger_export', 'otlp').encodeRecord(rec, SYSLOG_OPTS),
    );
  });

  it('on the syslog connector, cef and leef ride inside an RFC 5424 frame', () => {
    const rec = baseRecord();
    const framed = parseSyslog(encoderFor('syslog_connector', 'cef').encodeRecord(rec, SYSLOG_OPTS));
    assert.equal(framed.msg, cefEncoder.encodeRecord(rec, SYSLOG_OPTS));
    assert.ok(parseSyslog(encoderFor('syslog_connector', 'leef').encodeRecord(rec, SYSLOG_OPTS)).msg.startsWith('LEEF:2.0|'));
    assert.ok(encoderFor('ledger_export', 'cef').encodeRecord(rec, SYSLOG_OPTS).startsWith('CEF:0|'));
  });
});
