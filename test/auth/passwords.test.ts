import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { assertPasswordPolicy, hashPassword, PASSWORD_PARAMS, verifyPassword } from '../../src/auth/passwords.js';
import { ApiError } from '../../src/contract/errors.js';

test('passwords: production cost is scrypt N=2^16 r=8 p=1 (64 MiB, the argon2id 64 MiB profile)', async () => {
  assert.deepEqual(PASSWORD_PARAMS, { log2N: 16, r: 8, p: 1 });
  assert.equal(128 * 2 ** PASSWORD_PARAMS.log2N * PASSWORD_PARAMS.r, 64 * 1024 * 1024);
  const stored = await hashPassword('correct horse battery staple');
  assert.match(stored, /^scrypt\$16\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  // Recompute with node's synchronous scrypt from the stored salt: the format is what it says.
  const [, , , , salt, key] = stored.split('$');
  const again = scryptSync('correct horse battery staple', Buffer.from(salt!, 'base64'), 32, {
    N: 2 ** 16,
    r: 8,
    p: 1,
    maxmem: 256 * 1024 * 1024,
  });
  assert.equal(again.toString('base64'), key);
});

test('passwords: verify accepts the password, refuses others and malformed hashes', async () => {
  const params = { log2N: 10, r: 8, p: 1 };
  const stored = await hashPassword('twelve chars ok', params);
  assert.equal(await verifyPassword('twelve chars ok', stored), true);
  assert.equal(await verifyPassword('twelve chars ok ', stored), false);
  assert.equal(await verifyPassword('twelve chars ok', stored.replace('scrypt$', 'bcrypt$')), false);
  assert.equal(await verifyPassword('twelve chars ok', 'scrypt$99$8$1$AA$AA'), false);
  assert.notEqual(await hashPassword('twelve chars ok', params), stored, 'fresh salt per hash');
});

test('passwords: fewer than 12 characters (code points) is weak_password', () => {
  assert.throws(
    () => assertPasswordPolicy('elevenchars'),
    (e: unknown) => e instanceof ApiError && e.code === 'weak_password' && e.status === 400,
  );
  assert.throws(() => assertPasswordPolicy('😀'.repeat(11)), (e: unknown) => e instanceof ApiError && e.code === 'weak_password');
  assert.doesNotThrow(() => assertPasswordPolicy('twelve chars'));
});
