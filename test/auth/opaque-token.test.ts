import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { base32Encode } from '../../src/auth/base32.js';
import { mintToken, parseToken, secretMatches } from '../../src/auth/opaque-token.js';

test('base32: RFC 4648 §10 test vectors, unpadded', () => {
  const vectors: Array<[string, string]> = [
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ];
  for (const [input, expected] of vectors) assert.equal(base32Encode(Buffer.from(input)), expected);
});

test('tokens: svcs_/svck_ + 26-char selector + 52-char secret; only SHA-256 of the secret is kept', () => {
  for (const [kind, prefix] of [['session', 'svcs_'], ['api_key', 'svck_']] as const) {
    const t = mintToken(kind);
    assert.match(t.token, new RegExp(`^${prefix}[A-Z2-7]{26}_[A-Z2-7]{52}$`));
    const parsed = parseToken(t.token);
    assert.deepEqual(parsed && { kind: parsed.kind, selector: parsed.selector }, { kind, selector: t.selector });
    assert.equal(t.secretHash, createHash('sha256').update(parsed!.secret).digest('hex'));
    assert.ok(!t.token.includes(t.secretHash));
    assert.ok(secretMatches(parsed!.secret, t.secretHash));
    assert.ok(!secretMatches(parsed!.secret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), t.secretHash));
  }
  assert.notEqual(mintToken('session').token, mintToken('session').token);
});

test('tokens: malformed, truncated, padded or foreign-prefixed text does not parse', () => {
  const good = mintToken('api_key').token;
  for (const bad of [
    '',
    'svck_',
    good.slice(0, -1),
    good + 'A',
    good.toLowerCase(),
    good.replace('_', '-'),
    good.replace('svck_', 'svcx_'),
    good.replace('svck_', 'svcst_'),
    good.slice(0, 31) + '=' + good.slice(32),
    `${good} `,
    'Bearer ' + good,
    good.replace(/_([A-Z2-7]{52})$/, '$1'),
  ]) {
    assert.equal(parseToken(bad), undefined, JSON.stringify(bad));
  }
});

test('tokens: an unknown selector compares against a dummy and never matches', () => {
  const t = mintToken('session');
  assert.equal(secretMatches(parseToken(t.token)!.secret, undefined), false);
});
