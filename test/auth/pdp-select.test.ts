import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pdpConfigFromEnv, PdpConfigError, selectPdp } from '../../src/auth/pdp-select.js';
import { nonePdp } from '../../src/auth/pdp.js';

const log = { warn() {} };

test('pdp config: none is the default, engines are case-insensitive, unknown ones refuse', () => {
  assert.deepEqual(pdpConfigFromEnv({}), { engine: 'none', cedarPolicies: undefined, opaUrl: undefined, opaTimeoutMs: undefined });
  assert.equal(pdpConfigFromEnv({ SERVICE_PDP_ENGINE: 'Cedar' }).engine, 'cedar');
  assert.equal(pdpConfigFromEnv({ SERVICE_PDP_ENGINE: 'opa', SERVICE_PDP_OPA_TIMEOUT_MS: '250' }).opaTimeoutMs, 250);
  assert.throws(() => pdpConfigFromEnv({ SERVICE_PDP_ENGINE: 'xacml' }), /cedar, opa|none, cedar, opa/);
  assert.throws(() => pdpConfigFromEnv({ SERVICE_PDP_ENGINE: 'opa', SERVICE_PDP_OPA_TIMEOUT_MS: '0' }), PdpConfigError);
  assert.throws(() => pdpConfigFromEnv({ SERVICE_PDP_OPA_TIMEOUT_MS: '1.5' }), PdpConfigError);
});

test('pdp select: none allows (the role check alone decides); opa without a URL refuses', async () => {
  const pdp = await selectPdp({ engine: 'none' }, log);
  assert.equal(pdp, nonePdp);
  assert.equal(
    await pdp.decide({
      principal: { id: 'user:u', kind: 'user', userId: 'u', superadmin: false, aal: 1 },
      action: 'agent:read',
      resource: { kind: 'agent' },
      context: { method: 'GET', route: '/v1/agents', remoteAddress: '127.0.0.1', requestId: 'r' },
    }),
    'allow',
  );
  await assert.rejects(selectPdp({ engine: 'opa' }, log), PdpConfigError);
  await assert.rejects(selectPdp({ engine: 'opa', opaUrl: 'http://127.0.0.1:8181/v1/policies/x' }, log), /v1\/data/);
  await assert.rejects(selectPdp({ engine: 'opa', opaUrl: 'ftp://127.0.0.1/v1/data/x' }, log), PdpConfigError);
});
