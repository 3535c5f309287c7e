import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CEF_HEADER_MAX, cefEncoder, cefLine } from '../../src/encoders/cef.js';
import { pctC0Decode, pctC0Encode } from '../../src/encoders/pct-c0.js';
import { SEVERITY } from '../../src/encoders/severity.js';
import { assertGolden } from './fixtures/golden.js';
import {
  CEF_KEYS,
  DEVICE,
  baseRecord,
  carriedValues,
  eventArb,
  hostileEvent,
  hostileRecord,
  hostileString,
  recordArb,
  timelessEvent,
} from './fixtures/records.js';
import { parseCef } from './fixtures/text-parse.js';
import { CEF_RULEBASE, LOGNORMALIZER, forLognormCef, lognormalize, missing } from './fixtures/tools.js';
import type { AuditRecord } from '../../src/ledger/record.js';

const octets = (s: string): number => Buffer.byteLength(s, 'utf8');
const codePoints = (s: string): number => [...s].length;
const encodeEvent = cefEncoder.encodeEvent as NonNullable<typeof cefEncoder.encodeEvent>;

/** Checks every carried value comes back exactly after undoing CEF escaping, then pct-c0-v1. */
function assertRoundTrip(r: AuditRecord, ext: ReadonlyArray<readonly [string, string]>): void {
  const got: Record<string, string> = {};
  for (const [k, v] of ext) {
    if (k === 'olvWireEnc') assert.equal(v, 'pct-c0-v1');
    const field = CEF_KEYS[k];
    if (field !== undefined) got[field] = pctC0Decode(v);
  }
  assert.deepEqual(got, carriedValues(r));
}

describe('cef encoder', () => {
  it('matches the golden lines (plain, hostile, event, timeless event)', () => {
    assertGolden('cef.txt', [
      cefEncoder.encodeRecord(baseRecord(), DEVICE),
      cefEncoder.encodeRecord(hostileRecord(), DEVICE),
      encodeEvent(hostileEvent(), DEVICE),
      encodeEvent(timelessEvent(), DEVICE),
    ]);
  });

  it('carries rt as epoch ms, the integrity fields verbatim and wire_enc', () => {
    const r = baseRecord({ payload_hash: 'ab'.repeat(32) });
    const p = parseCef(cefEncoder.encodeRecord(r, DEVICE));
    const ext = new Map(p.ext);
    assert.equal(ext.get('rt'), String(Date.parse('2026-06-02T10:00:00.123Z')));
    assert.equal(ext.get('olvWireEnc'), 'pct-c0-v1');
    assert.deepEqual(
      [p.vendor, p.product, p.deviceVersion, p.signatureId, p.severity],
      ['svc', 'control-plane', '0.1.0', 'agent.create', '1'],
    );
    assertRoundTrip(r, p.ext);
  });

  it('omits a null payload hash and an unparseable time rather than inventing one', () => {
    const p = parseCef(cefEncoder.encodeRecord(baseRecord({ occurred_at: 'garbage' }), DEVICE));
    const keys = p.ext.map(([k]) => k);
    assert.ok(!keys.includes('rt') && !keys.includes('olvPayloadHash'));
    assert.equal(new Map(p.ext).get('olvOccurredAt'), 'garbage');
  });

  it('truncates only the header: a 2 KB hostile action keeps its full value in act', () => {
    const r = hostileRecord();
    const line = cefEncoder.encodeRecord(r, DEVICE);
    const p = parseCef(line);
    assert.ok(octets(p.name) <= CEF_HEADER_MAX.name && octets(p.signatureId) <= CEF_HEADER_MAX.signatureId);
    assert.ok(pctC0Encode(r.action).startsWith(p.name) && p.name.length < pctC0Encode(r.action).length);
    assertRoundTrip(r, p.ext);
  });

  it('severity comes from the map; an undetermined event is CEF 0 (Unknown); event fields cannot override rt', () => {
    const p = parseCef(encodeEvent(timelessEvent(), DEVICE));
    assert.equal(p.severity, String(SEVERITY.undetermined.cef));
    assert.ok(!p.ext.some(([k]) => k === 'rt'));
    const h = new Map(parseCef(encodeEvent(hostileEvent(), DEVICE)).ext);
    assert.equal(h.get('rt'), String(Date.parse('2026-06-02T10:00:01.500Z')));
    assert.equal(h.get('olvRt'), 'not-a-time');
    assert.equal(pctC0Decode(h.get('key_with_space_and_bar_') ?? ''), 'a\r\nb\tc\0d%25e\\f|g=h"i]j\x7fk😀l ');
    assert.ok(!h.has('gone'));
    assert.equal(h.get('count'), '3');
  });

  it('property: header maxima hold in characters and UTF-8 octets for random Unicode, cutting whole units only', () => {
    const long = fc.oneof(
      hostileString(400),
      fc.string({ unit: 'binary', maxLength: 1500 }),
      fc.string({ unit: 'grapheme', maxLength: 1200 }),
    );
    fc.assert(
      fc.property(long, long, long, long, long, (vendor, product, version, signatureId, name) => {
        const line = cefLine({ vendor, product, version, signatureId, name, severity: 5 }, [['k', 'v']]);
        assert.ok(!/[\r\n]/.test(line));
        const p = parseCef(line);
        const pairs: Array<[string, string, number]> = [
          [p.vendor, vendor, CEF_HEADER_MAX.vendor], [p.product, product, CEF_HEADER_MAX.product],
          [p.deviceVersion, version, CEF_HEADER_MAX.version], [p.signatureId, signatureId, CEF_HEADER_MAX.signatureId],
          [p.name, name, CEF_HEADER_MAX.name],
        ];
        for (const [got, orig, max] of pairs) {
          const full = pctC0Encode(orig);
          assert.ok(octets(got) <= max && got.length <= max && codePoints(got) <= max, `${max}: ${octets(got)} octets`);
          assert.ok(full.startsWith(got), 'a prefix of the encoded value');
          // Whole units only: the kept part decodes (no split %XX, no lone surrogate).
          assert.equal(Buffer.from(got, 'utf8').toString('utf8'), got);
          pctC0Decode(got);
          // Maximal: the next unit would not have fitted.
          if (got !== full) {
            const nextUnit = full.startsWith('%', got.length) ? 3 : octets(String.fromCodePoint(full.codePointAt(got.length) ?? 0));
            assert.ok(octets(got) + nextUnit > max, 'no room was wasted');
          }
        }
        assert.deepEqual(p.ext, [['k', 'v']]);
      }),
      { numRuns: 300 },
    );
  });

  it('property: no raw CR/LF; undoing CEF escaping then pct-c0-v1 returns every original value', () => {
    fc.assert(
      fc.property(recordArb, (r) => {
        const line = cefEncoder.encodeRecord(r, DEVICE);
        assert.ok(!/[\r\n]/.test(line));
        assertRoundTrip(r, parseCef(line).ext);
      }),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(eventArb, (e) => {
        const line = encodeEvent(e, DEVICE);
        assert.ok(!/[\r\n]/.test(line));
        const ext = new Map(parseCef(line).ext);
        assert.equal(pctC0Decode(ext.get('msg') ?? ''), e.title);
        assert.equal(pctC0Decode(ext.get('cat') ?? ''), e.type);
        assert.equal(ext.size, parseCef(line).ext.length, 'keys are unique');
      }),
      { numRuns: 300 },
    );
  });

  it(
    'is parsed back by liblognorm (lognormalizer 2.0.6) with every value recovered',
    { skip: missing(LOGNORMALIZER, 'liblognorm-utils') },
    () => {
      const records = [baseRecord(), hostileRecord(), ...fc.sample(recordArb, { numRuns: 150, seed: 5 })];
      const parsed = lognormalize(
        CEF_RULEBASE,
        records.map((r) => forLognormCef(cefEncoder.encodeRecord(r, DEVICE))),
      );
      assert.equal(parsed.length, records.length);
      parsed.forEach((obj, i) => {
        const r = records[i] as AuditRecord;
        const cef = obj.cef as
          | {
              DeviceVendor: string;
              DeviceProduct: string;
              SignatureID: string;
              Name: string;
              Severity: string;
              Extensions: Record<string, string>;
            }
          | undefined;
        assert.ok(cef, `line ${i} not parsed: ${JSON.stringify(obj)}`);
        assert.deepEqual([cef.DeviceVendor, cef.DeviceProduct], ['svc', 'control-plane']);
        assert.ok(pctC0Encode(r.action).startsWith(cef.Name), 'header name is a prefix of the action');
        assert.ok(octets(cef.Name) <= CEF_HEADER_MAX.name);
        assertRoundTrip(r, Object.entries(cef.Extensions));
      });
      const ev = lognormalize(CEF_RULEBASE, [forLognormCef(encodeEvent(hostileEvent(), DEVICE))])[0]?.cef as {
        Extensions: Record<string, string>;
      };
      assert.equal(pctC0Decode(ev.Extensions.msg ?? ''), hostileEvent().title);
      assert.equal(ev.Extensions.olvRt, 'not-a-time');
    },
  );
});
