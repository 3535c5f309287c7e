import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalMeta, canonicalMetaBytes, CanonicalJsonError, isCanonicalMetaText } from '../../src/ledger/canonical-json.js';

test('RFC 8785 sorting, number and string forms', () => {
  // RFC 8785 §3.2.3: keys sorted by UTF-16 code units, so "\u20ac" sorts before "\ud83d\ude00"-keyed entries.
  assert.equal(
    canonicalMeta({ b: 1, a: { d: true, c: null }, '€': 1, '😀': 2, '\r': 3, '1': 4 }),
    '{"\\r":3,"1":4,"a":{"c":null,"d":true},"b":1,"€":1,"😀":2}',
  );
  // RFC 8785 §3.2.2.3 / Appendix B: ECMAScript number serialisation.
  assert.equal(
    canonicalMeta({ n: [1e21, 1e-7, -0, 0.1, 333333333.3333333, 4.5, 2 ** 53] }),
    '{"n":[1e+21,1e-7,0,0.1,333333333.3333333,4.5,9007199254740992]}',
  );
  assert.equal(canonicalMeta({ s: 'a\u0000\u001f"\\/é\u2028' }), '{"s":"a\\u0000\\u001f\\"\\\\/é\u2028"}');
  assert.equal(canonicalMeta({}), '{}');
  assert.deepEqual(canonicalMetaBytes({ k: 'é' }), Buffer.from('{"k":"é"}', 'utf8'));
});

test('property order of the input does not matter', () => {
  assert.equal(canonicalMeta({ x: 1, y: [1, { b: 2, a: 1 }] }), canonicalMeta({ y: [1, { a: 1, b: 2 }], x: 1 }));
});

test('undefined object members are dropped, as in JSON', () => {
  assert.equal(canonicalMeta({ a: undefined, b: 1 }), '{"b":1}');
});

test('non-objects and non-JSON values are refused', () => {
  const bad: unknown[] = [
    null, [], 'x', 1, true,
    { n: NaN }, { n: Infinity }, { n: -Infinity }, { n: [1, Number.NaN] },
    { b: 10n }, { f: () => 1 }, { s: Symbol('x') }, { d: new Date(0) }, { m: new Map() },
    { a: [undefined] }, { s: 'lone \ud800 surrogate' }, Object.create({ inherited: 1 }),
  ];
  for (const v of bad) assert.throws(() => canonicalMeta(v), CanonicalJsonError, String(v));
  const deep: Record<string, unknown> = {};
  let cur = deep;
  for (let i = 0; i < 100; i++) { const next = {}; cur['x'] = next; cur = next; }
  assert.throws(() => canonicalMeta(deep), CanonicalJsonError);
});

test('isCanonicalMetaText accepts only the exact canonical text of an object', () => {
  assert.ok(isCanonicalMetaText('{"a":1,"b":[true,null]}'));
  assert.equal(isCanonicalMetaText('{"b":1,"a":1}'), false);
  assert.equal(isCanonicalMetaText('{"a": 1}'), false);
  assert.equal(isCanonicalMetaText('{"a":1.0}'), false);
  assert.equal(isCanonicalMetaText('[1]'), false);
  assert.equal(isCanonicalMetaText('{'), false);
});
