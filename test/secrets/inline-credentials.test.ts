/**
 * What counts as an inline credential (docs/governance.md): by key with a literal value, by well-known shape, in argument lists; references
 * and sources are not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findInlineCredentials } from '../../src/secrets/inline-credentials.js';

const paths = (doc: unknown) => findInlineCredentials(doc).map((c) => c.path);

describe('findInlineCredentials', () => {
  it('flags a literal under a key that names a credential, whatever its spelling', () => {
    assert.deepEqual(
      paths({
        env: {
          GITHUB_TOKEN: 'abc123xyz',
          'db-password': 'hunter22',
          apiKey: 'k1',
          ClientSecret: 's',
          headers: { Authorization: 'x' },
          x_api_key: 'y',
        },
      }),
      ['env.GITHUB_TOKEN', 'env.db-password', 'env.apiKey', 'env.ClientSecret', 'env.headers.Authorization', 'env.x_api_key'],
    );
  });

  it('leaves references, empty values, numbers and the keys that name where a credential comes from', () => {
    assert.deepEqual(
      paths({
        env: { A_TOKEN: 'secret:github', B_TOKEN: '${B_TOKEN}', C_TOKEN: '$C_TOKEN', D_TOKEN: '', MAX_TOKENS: '8000', STRICT_AUTH: 'true' },
        apiKeyHelper: '/usr/bin/get-key',
        tokenFile: '/run/t',
        password_command: 'pass show x',
        tokenUrl: 'https://idp/token',
      }),
      [],
    );
  });

  it('flags well-known credential shapes under any key, and never returns the value', () => {
    const values = [
      'Bearer abcdefghijklmnop',
      'sk-ant-api03-abcdefghijklmnopqrstuv',
      'ghp_abcdefghijklmnopqrstuvwxyz0123',
      'glpat-abcdefghijklmnopqrstu',
      'xoxb-1234567890-abcdef',
      'AKIAABCDEFGHIJKLMNOP',
      'AIzaSyA-abcdefghijklmnopqrstuvwxyz01234',
      `svck_${'A'.repeat(26)}_${'B'.repeat(52)}`,
      '-----BEGIN OPENSSH PRIVATE KEY-----\nx',
      'postgres://app:hunter2@db/app',
    ];
    const found = findInlineCredentials({ notes: values });
    assert.deepEqual(found.map((f) => f.path), values.map((_, i) => `notes[${i}]`));
    for (const f of found) for (const v of values) assert.ok(!JSON.stringify(f).includes(v));
    assert.deepEqual(paths({ url: 'postgres://app:${DB_PASSWORD}@db/app', auth: 'Bearer ${TOKEN}' }), []);
  });

  it('flags the value after a credential flag in an argument list', () => {
    assert.deepEqual(paths({ args: ['--site', 'acme', '--api-key', 'abc123', '--token=xyz987', '--password', '${PW}'] }), [
      'args[3]',
      'args[4]',
    ]);
  });
});
