import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PctC0DecodeError, WIRE_ENC, pctC0Decode, pctC0DecodeBytes, pctC0Encode } from '../../src/encoders/pct-c0.js';

const CONTROL = /[\x00-\x1F\x7F]/;

describe('pct-c0-v1', () => {
  it('is named pct-c0-v1 on the wire', () => {
    assert.equal(WIRE_ENC, 'pct-c0-v1');
  });

  it('escapes %, every C0 control and DEL with uppercase hex, and nothing else', () => {
    assert.equal(pctC0Encode('100%'), '100%25');
    assert.equal(pctC0Encode('a\r\nb\tc\0d\x1b\x1f\x7f'), 'a%0D%0Ab%09c%00d%1B%1F%7F');
    for (let c = 0; c < 0x20; c++) assert.equal(pctC0Encode(String.fromCharCode(c)), '%' + c.toString(16).toUpperCase().padStart(2, '0'));
    // Printable ASCII, C1 controls, line/paragraph separators and 4-byte UTF-8 pass through.
    const keep = ' !"#$&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\u0085\u2028\u2029é😀\uFEFF';
    assert.equal(pctC0Encode(keep), keep);
  });

  it('escapes each byte of invalid UTF-8 and keeps valid sequences', () => {
    const cases: Array<[number[], string]> = [
      [[0xff, 0x41], '%FFA'],
      [[0xc0, 0x80], '%C0%80'], // overlong NUL
      [[0xe0, 0x80, 0xaf], '%E0%80%AF'], // overlong '/'
      [[0xed, 0xa0, 0x80], '%ED%A0%80'], // UTF-16 surrogate encoded in UTF-8
      [[0xf4, 0x90, 0x80, 0x80], '%F4%90%80%80'], // above U+10FFFF
      [[0xf0, 0x9f, 0x98], '%F0%9F%98'], // truncated 4-byte sequence
      [[0xf0, 0x9f, 0x98, 0x80, 0x80], '😀%80'], // stray continuation after a valid one
      [[0xc3, 0xa9, 0x25, 0x0a], 'é%25%0A'],
      [[0xef, 0xbf, 0xbd], '\uFFFD'], // a real U+FFFD is valid and kept
    ];
    for (const [bytes, want] of cases) assert.equal(pctC0Encode(Uint8Array.from(bytes)), want, bytes.join(','));
  });

  it('replaces a lone surrogate in a string by U+FFFD, the bytes Buffer.from() and the hash input use', () => {
    for (const s of ['a\uD800b', 'a\uDC00', '\uD83D', '\uDE00x']) {
      const enc = pctC0Encode(s);
      assert.ok(enc.includes('\uFFFD'));
      assert.deepEqual(pctC0DecodeBytes(enc), Buffer.from(s, 'utf8'));
    }
  });

  it('decodes back exactly and rejects malformed input', () => {
    assert.equal(pctC0Decode('a%0D%0Ab%25c'), 'a\r\nb%c');
    assert.deepEqual(pctC0DecodeBytes('%FFA%c3%A9'), Buffer.from([0xff, 0x41, 0xc3, 0xa9]));
    for (const bad of ['%', '%4', '%GG', 'x%2', 'raw\nnewline', 'tab\there', '\uD800'])
      assert.throws(() => pctC0DecodeBytes(bad), PctC0DecodeError, JSON.stringify(bad));
    assert.throws(() => pctC0Decode('%FF'), PctC0DecodeError);
  });

  it('property: bytes round-trip exactly; output is valid UTF-8 without control characters', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const enc = pctC0Encode(bytes);
        assert.ok(!CONTROL.test(enc));
        assert.equal(Buffer.from(enc, 'utf8').toString('utf8'), enc);
        assert.deepEqual(pctC0DecodeBytes(enc), Buffer.from(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: well-formed strings round-trip and encode like their UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        const enc = pctC0Encode(s);
        assert.ok(!CONTROL.test(enc));
        assert.equal(pctC0Decode(enc), s);
        assert.equal(pctC0Encode(Buffer.from(s, 'utf8')), enc);
        // Only `%` escapes exist besides controls, so a text without them is unchanged.
        if (!/[%\x00-\x1F\x7F]/.test(s)) assert.equal(enc, s);
      }),
      { numRuns: 2000 },
    );
  });
});
