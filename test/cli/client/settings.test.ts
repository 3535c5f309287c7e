import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { isLoopbackHost, parseServerUrl, resolveClientSettings } from '../../../src/cli/client/settings.js';
import type { ClientFlags } from '../../../src/cli/client/settings.js';
import { CliError } from '../../../src/cli/client/errors.js';
import { tempDir } from '../harness.js';

const noStdin = (): Readable => Readable.from([]);
const context = { server: 'https://ctx.example:1', tenant: 'ctx-tenant', token: 'ctx-token' };
const env = { SERVICE_SERVER_URL: 'https://env.example:2', SERVICE_TENANT: 'env-tenant', SERVICE_TOKEN: 'env-token' };
const flags: ClientFlags = { server: 'https://flag.example:3', tenant: 'flag-tenant', token: 'flag-token' };

async function usageError(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => err instanceof CliError && err.exitCode === 2 && pattern.test(err.message));
}

describe('client settings precedence (flag > env > context)', () => {
  it('takes each value from the flag first', async () => {
    const s = await resolveClientSettings(flags, env, context, noStdin());
    assert.equal(s.server.host, 'flag.example:3');
    assert.equal(s.tenant, 'flag-tenant');
    assert.equal(s.token, 'flag-token');
    assert.deepEqual(s.sources, { server: 'flag', tenant: 'flag', token: 'flag' });
  });

  it('falls back to SERVICE_* env, then to the saved context, value by value', async () => {
    const s = await resolveClientSettings({ tenant: 'flag-tenant' }, { SERVICE_TOKEN: 'env-token' }, context, noStdin());
    assert.equal(s.tenant, 'flag-tenant');
    assert.equal(s.token, 'env-token');
    assert.equal(s.server.host, 'ctx.example:1');
    assert.deepEqual(s.sources, { server: 'context', tenant: 'flag', token: 'env' });
  });

  it('treats empty env values as unset', async () => {
    const s = await resolveClientSettings({}, { SERVICE_SERVER_URL: '', SERVICE_TOKEN: '' }, context, noStdin());
    assert.equal(s.server.host, 'ctx.example:1');
    assert.equal(s.token, 'ctx-token');
  });

  it('reads --token-file from a file or from stdin, ahead of env', async () => {
    const dir = tempDir();
    const file = join(dir, 'token');
    writeFileSync(file, 'file-token\n');
    const fromFile = await resolveClientSettings({ tokenFile: file }, env, context, noStdin());
    assert.equal(fromFile.token, 'file-token');
    const fromStdin = await resolveClientSettings({ tokenFile: '-' }, env, context, Readable.from(['stdin-', 'token\n']));
    assert.equal(fromStdin.token, 'stdin-token');
    assert.equal(fromStdin.sources.token, 'flag');
  });

  it('refuses --token with --token-file, an unreadable or multi-token file, and no server at all', async () => {
    const dir = tempDir();
    const file = join(dir, 'token');
    writeFileSync(file, 'one two\n');
    await usageError(resolveClientSettings({ token: 'a', tokenFile: file }, {}, context, noStdin()), /mutually exclusive/);
    await usageError(resolveClientSettings({ tokenFile: file }, {}, context, noStdin()), /exactly one token/);
    await usageError(resolveClientSettings({ tokenFile: join(dir, 'missing') }, {}, context, noStdin()), /cannot read/);
    await usageError(resolveClientSettings({}, {}, {}, noStdin()), /no server/);
  });

  it('defaults the timeout to 10s and rejects bad durations and bad pins as usage errors', async () => {
    assert.equal((await resolveClientSettings({}, {}, context, noStdin())).timeoutMs, 10_000);
    assert.equal((await resolveClientSettings({ timeout: '750ms' }, {}, context, noStdin())).timeoutMs, 750);
    await usageError(resolveClientSettings({ timeout: 'soon' }, {}, context, noStdin()), /invalid --timeout/);
    await usageError(resolveClientSettings({ pinSha256: ['nope'] }, {}, context, noStdin()), /invalid --pin-sha256/);
  });

  it('uses pins from the flag over the context, and context pins otherwise', async () => {
    const a = Buffer.alloc(32, 1);
    const b = Buffer.alloc(32, 2);
    const withCtx = { ...context, pin_sha256: [a.toString('base64')] };
    assert.deepEqual((await resolveClientSettings({}, {}, withCtx, noStdin())).pins, [a]);
    assert.deepEqual((await resolveClientSettings({ pinSha256: [b.toString('hex')] }, {}, withCtx, noStdin())).pins, [b]);
  });
});

describe('server URL and loopback', () => {
  it('assumes https for a bare host:port and keeps a base path', () => {
    assert.equal(parseServerUrl('127.0.0.1:8443').href, 'https://127.0.0.1:8443/');
    assert.equal(parseServerUrl('https://cp.example/base/').pathname, '/base/');
  });

  it('refuses other schemes, embedded credentials and queries', () => {
    for (const bad of ['ftp://x', 'https://user:pw@x', 'https://x/?a=1', 'https://']) {
      assert.throws(() => parseServerUrl(bad), (err: unknown) => err instanceof CliError && err.exitCode === 2, bad);
    }
  });

  it('knows which hosts are loopback', () => {
    const mapped = new URL('http://[::ffff:127.0.0.1]/').hostname;
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '[::1]', mapped])
      assert.equal(isLoopbackHost(host), true, host);
    for (const host of [
      '10.255.255.1',
      '128.0.0.1',
      'example.com',
      'localhost.example.com',
      '[::2]',
      '0.0.0.0',
      new URL('http://[::ffff:10.0.0.1]/').hostname,
    ]) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });
});
