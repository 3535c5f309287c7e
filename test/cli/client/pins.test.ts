import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { parsePin } from '../../../src/cli/client/pins.js';

const digest = createHash('sha256').update('a public key').digest();

describe('parsePin', () => {
  it('accepts base64, with and without padding and with the curl sha256// prefix', () => {
    const b64 = digest.toString('base64');
    assert.equal(b64.length, 44);
    for (const text of [b64, b64.replace(/=$/, ''), `sha256//${b64}`, ` ${b64} `]) {
      assert.deepEqual(parsePin(text), digest, text);
    }
  });

  it('accepts hex in either case, and colon-separated pairs', () => {
    const hex = digest.toString('hex');
    const colons = hex.toUpperCase().match(/../g)!.join(':');
    for (const text of [hex, hex.toUpperCase(), colons]) assert.deepEqual(parsePin(text), digest, text);
  });

  it('rejects garbage and wrong lengths', () => {
    const hex = digest.toString('hex');
    const b64 = digest.toString('base64');
    const rejected = [
      '', 'not-a-pin', hex.slice(0, 62), `${hex}00`, hex.replace(/^./, 'g'), b64.slice(0, 40),
      createHash('sha1').update('x').digest('base64'), createHash('sha512').update('x').digest('base64'),
      `${b64.slice(0, 42)}!=`, 'sha256//', hex.match(/../g)!.join('-'), `${hex.slice(0, 2)}:${hex.slice(2)}`,
    ];
    for (const text of rejected) assert.equal(parsePin(text), undefined, text);
  });
});
