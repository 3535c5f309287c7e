import { test } from 'node:test';
import assert from 'node:assert/strict';
import { permissionCatalog, permissionRule, permissionsOf, roleAtLeast } from '../../src/auth/roles.js';
import { identityRoutes } from '../helpers/identity-routes.js';

test('roles: viewer < editor < admin < owner; minimum role per permission', () => {
  assert.ok(roleAtLeast('owner', 'viewer') && roleAtLeast('admin', 'admin') && !roleAtLeast('editor', 'admin'));
  const min = (p: string, privileged = false) => permissionRule(p, privileged).minRole;
  assert.equal(min('agent:read'), 'viewer');
  assert.equal(min('agent:write'), 'editor');
  assert.equal(min('agent:admin'), 'admin');
  assert.equal(min('agent:read', true), 'editor', 'privileged reads: editor and above, never viewer');
  assert.equal(min('accessmap:graph:read', true), 'editor');
  assert.equal(min('user:read'), 'admin');
  assert.equal(min('membership:admin'), 'admin');
  assert.equal(min('ingest:write'), 'admin');
  assert.equal(min('agent:frobnicate'), 'admin', 'an unknown verb leans up');
  assert.equal(permissionRule('system:admin').scope, 'system');
  assert.equal(permissionRule('self:read').scope, 'principal');
});

test('roles: the catalog comes from the route table; viewers never get system:admin or admin permissions', () => {
  const catalog = permissionCatalog(identityRoutes);
  const names = catalog.map((r) => r.permission);
  for (const p of [
    'self:read',
    'self:write',
    'token:read',
    'token:write',
    'user:read',
    'user:admin',
    'membership:read',
    'membership:admin',
    'system:admin',
  ])
    assert.ok(names.includes(p), p);
  assert.ok(!names.includes('public'));
  const viewer = permissionsOf('viewer', catalog);
  assert.ok(viewer.includes('token:write') && !viewer.includes('user:admin') && !viewer.includes('system:admin'));
  assert.ok(permissionsOf('admin', catalog).includes('membership:admin'));
  assert.ok(!permissionsOf('owner', catalog).includes('system:admin'), 'only the superadmin flag holds system:admin');
});
