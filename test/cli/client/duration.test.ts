import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDuration } from '../../../src/cli/client/duration.js';

describe('parseDuration', () => {
  it('reads units, compounds and bare seconds', () => {
    const cases: Array<[string, number]> = [
      ['10s', 10_000], ['500ms', 500], ['2m', 120_000], ['1h', 3_600_000], ['1m30s', 90_000],
      ['1.5s', 1500], ['5', 5000], ['0.25', 250], [' 3s ', 3000], ['1h2m3s4ms', 3_723_004],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('rejects garbage, zero and negatives', () => {
    for (const text of ['', 's', 'abc', '10x', '-1s', '0s', '0', '10 s', '1d', 'ms10', '1s-', '1e3s', 'Infinity']) {
      assert.equal(parseDuration(text), undefined, JSON.stringify(text));
    }
  });
});
