import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { otlpTimeUnixNano, parseRfc3339, OTLP_MAX_UNIX_NANO, INT64_MAX_UNIX_NANO } from '../../src/encoders/otlp-time.js';

/** Independent formatter: Date.toISOString for the millisecond part, then the sub-ms digits. */
function rfc3339FromNanos(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ (or ±YYYYYY beyond 9999)
  const subMs = (ns % 1_000_000n).toString().padStart(6, '0');
  return iso.replace('Z', `${subMs}Z`);
}

describe('OTLP timestamps (spec OTLP rule 4)', () => {
  it('keeps the earlier encoding at the zero time, the epoch and the int64 end', () => {
    assert.equal(otlpTimeUnixNano('0001-01-01T00:00:00Z'), '0');
    assert.equal(otlpTimeUnixNano('0001-01-01T00:00:00.000000000Z'), '0');
    assert.equal(otlpTimeUnixNano('1970-01-01T00:00:00Z'), '0');
    assert.equal(otlpTimeUnixNano('1970-01-01T00:00:00.000000001Z'), '1');
    assert.equal(otlpTimeUnixNano('2262-04-11T23:47:16.854775807Z'), '9223372036854775807');
    assert.equal(INT64_MAX_UNIX_NANO.toString(), '9223372036854775807');
  });

  it('is exact between 2262 and 2554 (beyond int64 and far beyond 2^53)', () => {
    assert.equal(otlpTimeUnixNano('2262-04-11T23:47:16.854775808Z'), '9223372036854775808');
    assert.equal(otlpTimeUnixNano('2400-01-01T00:00:00.000000001Z'), '13569465600000000001');
    assert.equal(otlpTimeUnixNano('2554-07-21T23:34:33.709551615Z'), '18446744073709551615');
    assert.equal(OTLP_MAX_UNIX_NANO.toString(), '18446744073709551615');
  });

  it('encodes an instant past 2554-07-21T23:34:33.709551615Z as unknown (0)', () => {
    assert.equal(otlpTimeUnixNano('2554-07-21T23:34:33.709551616Z'), '0');
    assert.equal(otlpTimeUnixNano('2554-07-21T23:34:34Z'), '0');
    assert.equal(otlpTimeUnixNano('9999-12-31T23:59:59.999999999Z'), '0');
  });

  it('corrects a pre-epoch instant to 0 (unknown) instead of wrapping it', () => {
    assert.equal(otlpTimeUnixNano('1969-12-31T23:59:59.999999999Z'), '0');
    assert.equal(otlpTimeUnixNano('1677-09-21T00:12:43.145224192Z'), '0');
    assert.equal(otlpTimeUnixNano('0001-01-01T00:00:00.000000001Z'), '0');
    // the old u64 cast would have produced 2^64-1 here
    assert.notEqual(otlpTimeUnixNano('1969-12-31T23:59:59.999999999Z'), (OTLP_MAX_UNIX_NANO).toString());
  });

  it('honours UTC offsets, lowercase t/z and truncates digits beyond nanoseconds', () => {
    assert.equal(otlpTimeUnixNano('2025-03-14T16:09:26.5+01:00'), otlpTimeUnixNano('2025-03-14T15:09:26.500Z'));
    assert.equal(otlpTimeUnixNano('1970-01-01t00:00:01z'), '1000000000');
    assert.equal(otlpTimeUnixNano('1970-01-01T00:00:00.0000000019Z'), '1');
    assert.equal(otlpTimeUnixNano('1970-01-01T01:00:00+01:00'), '0');
  });

  it('never fabricates a time for absent or invalid text', () => {
    for (const bad of [undefined, null, '', 'now', '2025-02-29T00:00:00Z', '2025-13-01T00:00:00Z', '2025-01-01T24:00:00Z',
      '2016-12-31T23:59:60Z', '2025-01-01T00:00:00', '2025-01-01 00:00:00Z', '2025-01-01T00:00:00+24:00', ' 2025-01-01T00:00:00Z']) {
      assert.equal(otlpTimeUnixNano(bad), '0', String(bad));
    }
    assert.notEqual(parseRfc3339('2024-02-29T00:00:00Z'), null);
  });

  it('round-trips every nanosecond of the representable range against Date (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 253402300799999999999n }), (ns) => {
        // Date.toISOString covers years 0000..9999 with 4 digits; cap at 9999-12-31
        const text = rfc3339FromNanos(ns);
        const expected = ns > OTLP_MAX_UNIX_NANO ? '0' : ns.toString();
        assert.equal(otlpTimeUnixNano(text), expected, text);
      }),
      { numRuns: 2000 },
    );
  });
});
