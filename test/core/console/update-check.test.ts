/**
 * update-check against a release manifest served on loopback: signed and newer → update_available,
 * same version → current, a bad signature or an unreachable URL → unknown (never current), and no
 * URL → unknown without any network. Plus the effective-config redaction rules on their own.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import canonicalize from 'canonicalize';
import { checkForUpdate, compareVersions } from '../../../src/core/console/update-check.js';
import { effectiveConfig, redactUrlPassword } from '../../../src/core/console/effective-config.js';
import { resolveServeConfig } from '../../../src/serve/config.js';

const keys = generateKeyPairSync('ed25519');
const pub = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
let body = '';
let served = 0;
let server: Server;
let url: string;

function manifest(version: string, tamper = false): string {
  const release = { version, released_at: '2026-11-01T00:00:00Z', url: 'https://example.test/svc' };
  const signature = sign(null, Buffer.from(canonicalize(release) as string), keys.privateKey).toString('base64');
  return JSON.stringify({ release: tamper ? { ...release, version: '99.0.0' } : release, signature });
}

before(async () => {
  server = createServer((_req, res) => {
    served++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/manifest.json`;
});
after(() => server.close());

test('no URL: unknown, and no request is made', async () => {
  const before1 = served;
  const a = await checkForUpdate('1.2.3', {});
  assert.equal(a.status, 'unknown');
  assert.equal(served, before1);
});

test('signed manifest: newer → update_available, same → current; tampered or unreachable → unknown', async () => {
  const env = { SERVICE_UPDATE_MANIFEST_URL: url, SERVICE_UPDATE_PUBLIC_KEY: pub };
  body = manifest('1.3.0');
  assert.deepEqual(
    [(await checkForUpdate('1.2.3', env)).status, (await checkForUpdate('1.2.3', env)).latest_version],
    ['update_available', '1.3.0'],
  );
  body = manifest('1.2.3');
  assert.equal((await checkForUpdate('1.2.3', env)).status, 'current');
  body = manifest('1.3.0', true);
  const tampered = await checkForUpdate('1.2.3', env);
  assert.equal(tampered.status, 'unknown');
  assert.match(tampered.reason ?? '', /signature does not verify/);
  const down = await checkForUpdate('1.2.3', { ...env, SERVICE_UPDATE_MANIFEST_URL: 'http://127.0.0.1:9/m.json' });
  assert.equal(down.status, 'unknown');
});

test('versions compare numerically, a pre-release before its release', () => {
  assert.equal(compareVersions('1.10.0', '1.9.9'), 1);
  assert.equal(compareVersions('2.0.0-rc.1', '2.0.0'), -1);
  assert.equal(compareVersions('v1.0.0', '1.0.0'), 0);
});

test('effective config: DSN password and secret-named variables redacted; key-file paths shown', () => {
  assert.deepEqual(redactUrlPassword('postgres://svc:hunter2@db:5432/svc'), {
    value: 'postgres://svc:[redacted]@db:5432/svc',
    redacted: true,
  });
  assert.deepEqual(redactUrlPassword('host=db password=hunter2 user=svc').value, 'host=db password=[redacted] user=svc');
  const env = {
    SERVICE_DSN: 'postgres://svc:hunter2@127.0.0.1/svc',
    SERVICE_STORE: 'postgres',
    SERVICE_WEBHOOK_SECRET: 'whsec_abc',
    SERVICE_SECRETS_KEY_FILE: '/etc/svc/secrets.key',
    HOME: '/root',
  };
  const settings = effectiveConfig(resolveServeConfig({}, env), env);
  const text = JSON.stringify(settings);
  assert.ok(!text.includes('hunter2') && !text.includes('whsec_abc'));
  const by = (n: string) => settings.find((s) => s.name === n);
  assert.deepEqual([by('dsn')?.source, by('dsn')?.redacted], ['env', true]);
  assert.deepEqual([by('webhook_secret')?.value, by('webhook_secret')?.redacted], ['[redacted]', true]);
  assert.deepEqual([by('secrets_key_file')?.value, by('secrets_key_file')?.redacted], ['/etc/svc/secrets.key', false]);
  assert.equal(by('listen')?.source, 'default');
});
