import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCedarPdp } from '../../src/auth/pdp-cedar.js';
import { PdpConfigError, selectPdp } from '../../src/auth/pdp-select.js';
import type { PdpInput } from '../../src/auth/pdp.js';

const T1 = '0193a000-0000-7000-8000-000000000001';
const T2 = '0193a000-0000-7000-8000-000000000002';
const silent = { warnings: [] as string[], warn(_o: object, msg?: string) { this.warnings.push(msg ?? ''); } };

function user(id: string, role: string, aal = 1): PdpInput['principal'] {
  return { id: `user:${id}`, kind: 'user', userId: id, superadmin: false, role, aal };
}
function ctx(remoteAddress: string): PdpInput['context'] {
  return { method: 'POST', route: '/v1/agents', remoteAddress, requestId: 'r-1' };
}

function input(over: Partial<PdpInput> = {}): PdpInput {
  return {
    principal: user('u-1', 'editor'),
    action: 'agent:write',
    resource: { kind: 'agent', id: 'a-1', tenant: T1 },
    context: ctx('127.0.0.1'),
    ...over,
  };
}

// Real policies an operator would write: permit everything, then carve out.
const POLICIES = `
permit (principal, action, resource);

// Tenant 2 is read-only through the policy layer, whatever the roles say.
forbid (principal, action in Svc::Action::"write", resource in Svc::Tenant::"${T2}");

// API keys may never delete agents.
forbid (principal is Svc::ApiKey, action == Svc::Action::"agent:delete", resource);

// Token writes to audit only from loopback.
forbid (principal, action == Svc::Action::"audit:write", resource) unless { context.remoteAddress == "127.0.0.1" };

// Viewers cannot touch knowledge at all.
forbid (principal, action, resource) when { principal.role == "viewer" && resource.kind == "knowledge" };
`;

test('cedar: a permit-all policy with targeted forbids restricts only what it names', async () => {
  const pdp = createCedarPdp(POLICIES, silent);
  assert.equal(pdp.engine, 'cedar');
  assert.equal(await pdp.decide(input()), 'allow');
  // tenant scoping via entity hierarchy: resource in Tenant T2, action in the "write" group
  assert.equal(await pdp.decide(input({ resource: { kind: 'agent', id: 'a-1', tenant: T2 } })), 'deny');
  assert.equal(await pdp.decide(input({ action: 'agent:read', resource: { kind: 'agent', id: 'a-1', tenant: T2 } })), 'allow');
  // principal type mapping: kind token → Svc::ApiKey
  assert.equal(await pdp.decide(input({ action: 'agent:delete' })), 'allow');
  assert.equal(
    await pdp.decide(
      input({
        action: 'agent:delete',
        principal: { id: 'token:k-1', kind: 'token', userId: 'u-1', superadmin: false, role: 'admin', aal: 1 },
      }),
    ),
    'deny',
  );
  // context attributes
  assert.equal(await pdp.decide(input({ action: 'audit:write', context: ctx('10.0.0.9') })), 'deny');
  assert.equal(await pdp.decide(input({ action: 'audit:write', context: ctx('127.0.0.1') })), 'allow');
  // principal and resource attributes
  assert.equal(
    await pdp.decide(
      input({ action: 'knowledge:base:read', principal: user('u-2', 'viewer'), resource: { kind: 'knowledge', tenant: T1 } }),
    ),
    'deny',
  );
  assert.equal(
    await pdp.decide(
      input({ action: 'knowledge:base:read', principal: user('u-2', 'admin'), resource: { kind: 'knowledge', tenant: T1 } }),
    ),
    'allow',
  );
});

test('cedar: principal attributes carry aal and superadmin; the principal is named by user or token id', async () => {
  const pdp = createCedarPdp(`permit (principal == Svc::User::"u-1", action, resource) when { context.aal >= 3 && principal.aal >= 3 };
permit (principal == Svc::ApiKey::"k-9", action == Svc::Action::"agent:read", resource);
permit (principal, action, resource) when { principal.superadmin };`, silent);
  assert.equal(await pdp.decide(input()), 'deny');
  assert.equal(await pdp.decide(input({ principal: user('u-1', 'editor', 3) })), 'allow');
  assert.equal(await pdp.decide(input({ principal: user('u-2', 'editor', 3) })), 'deny');
  const key = { id: 'token:k-9', kind: 'token' as const, userId: 'u-2', superadmin: false, aal: 1 };
  assert.equal(await pdp.decide(input({ principal: key, action: 'agent:read' })), 'allow');
  assert.equal(await pdp.decide(input({ principal: key, action: 'agent:write' })), 'deny');
  assert.equal(await pdp.decide(input({ principal: { ...user('u-7', 'viewer'), superadmin: true } })), 'allow');
});

test('cedar: without a permit nothing is allowed (Cedar denies by default)', async () => {
  const pdp = createCedarPdp(`forbid (principal, action, resource) when { false };`, silent);
  assert.equal(await pdp.decide(input()), 'deny');
});

test('cedar: permits scoped to one tenant through principal membership', async () => {
  const pdp = createCedarPdp(`permit (principal in Svc::Tenant::"${T1}", action, resource in Svc::Tenant::"${T1}");`, silent);
  assert.equal(await pdp.decide(input()), 'allow');
  assert.equal(await pdp.decide(input({ resource: { kind: 'agent', tenant: T2 } })), 'deny');
  // a system route has no tenant: not in T1, so not permitted
  assert.equal(await pdp.decide(input({ action: 'system:admin', resource: { kind: 'system' } })), 'deny');
});

test('cedar: a policy that errors at evaluation denies instead of being skipped', async () => {
  // `context.missing` does not exist: the forbid errors; Cedar would skip it and allow.
  const pdp = createCedarPdp(
    `permit (principal, action, resource);\nforbid (principal, action, resource) when { context.missing == 1 };`,
    silent,
  );
  silent.warnings.length = 0;
  assert.equal(await pdp.decide(input()), 'deny');
  assert.ok(silent.warnings.some((w) => w.includes('policy error')));
});

test('cedar: policies that do not parse refuse to load', () => {
  assert.throws(() => createCedarPdp('permit (principal, action resource);', silent), PdpConfigError);
});

test('cedar: selectPdp reads the policy file named in the config', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-cedar-'));
  try {
    const file = path.join(dir, 'policies.cedar');
    writeFileSync(file, POLICIES);
    const pdp = await selectPdp({ engine: 'cedar', cedarPolicies: file }, silent);
    assert.equal(await pdp.decide(input({ resource: { kind: 'agent', tenant: T2 } })), 'deny');
    assert.equal(await pdp.decide(input()), 'allow');
    await assert.rejects(selectPdp({ engine: 'cedar', cedarPolicies: path.join(dir, 'missing.cedar') }, silent), PdpConfigError);
    await assert.rejects(selectPdp({ engine: 'cedar' }, silent), PdpConfigError);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
