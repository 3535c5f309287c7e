import { test } from 'node:test';
import assert from 'node:assert/strict';
import { originAllowed, webauthnSettingsFromEnv } from '../../../src/auth/webauthn/settings.js';

test('webauthn settings: localhost by default, any https port on the RP host', () => {
  const s = webauthnSettingsFromEnv({});
  assert.deepEqual(s, { rpId: 'localhost', rpName: 'svc', origins: [] });
  assert.equal(originAllowed('https://localhost:8443', s), true);
  assert.equal(originAllowed('https://localhost', s), true);
  assert.equal(originAllowed('http://localhost:8443', s), false, 'never plain http');
  assert.equal(originAllowed('https://evil.localhost:8443', s), false);
  assert.equal(originAllowed('https://127.0.0.1:8443', s), false);
  assert.equal(originAllowed('https://localhost:8443/path', s), false);
  assert.equal(originAllowed('not a url', s), false);
});

test('webauthn settings: configured origins are exact and must sit within the RP ID', () => {
  const s = webauthnSettingsFromEnv({
    SERVICE_WEBAUTHN_RP_ID: 'Example.COM',
    SERVICE_WEBAUTHN_ORIGINS: 'https://cp.example.com:8443, https://example.com',
  });
  assert.equal(s.rpId, 'example.com');
  assert.equal(originAllowed('https://cp.example.com:8443', s), true);
  assert.equal(originAllowed('https://cp.example.com', s), false);
  assert.equal(originAllowed('https://example.com', s), true);
  assert.throws(() => webauthnSettingsFromEnv({ SERVICE_WEBAUTHN_RP_ID: '10.0.0.1' }), /DNS name/);
  assert.throws(() => webauthnSettingsFromEnv({ SERVICE_WEBAUTHN_ORIGINS: 'http://localhost:8443' }), /https origin/);
  assert.throws(
    () => webauthnSettingsFromEnv({ SERVICE_WEBAUTHN_RP_ID: 'example.com', SERVICE_WEBAUTHN_ORIGINS: 'https://example.org' }),
    /not within/,
  );
});
