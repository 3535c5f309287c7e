import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from '../../src/http/router.js';

test('router: static, templated, specificity, 404 and 405 with Allow', () => {
  const r = new Router<string>();
  r.add('GET', '/v1/users', 'list');
  r.add('POST', '/v1/users', 'create');
  r.add('GET', '/v1/users/superadmins', 'superadmins');
  r.add('POST', '/v1/users/{id}/disable', 'disable');
  r.add('GET', '/v1/agents/{id}', 'get');
  r.add('DELETE', '/v1/agents/{id}', 'delete');

  const found = (m: string, p: string) => {
    const x = r.find(m, p);
    assert.equal(x.kind, 'found', `${m} ${p}`);
    return x.kind === 'found' ? x.match : undefined!;
  };
  assert.equal(found('GET', '/v1/users').value, 'list');
  assert.equal(found('GET', '/v1/users/superadmins').value, 'superadmins');
  assert.deepEqual(found('POST', '/v1/users/u1/disable').params, { id: 'u1' });
  assert.deepEqual(found('GET', '/v1/agents/a%2Fb').params, { id: 'a/b' }, 'params are percent-decoded per segment');
  assert.equal(found('HEAD', '/v1/agents/x').value, 'get', 'HEAD is served by GET');

  assert.deepEqual(r.find('PUT', '/v1/agents/x'), { kind: 'method_not_allowed', allow: ['DELETE', 'GET'] });
  assert.deepEqual(r.find('DELETE', '/v1/users'), { kind: 'method_not_allowed', allow: ['GET', 'POST'] });
  assert.equal(r.find('GET', '/v1/agents').kind, 'not_found');
  assert.equal(r.find('GET', '/v1/agents/').kind, 'not_found', 'an empty parameter never matches');
  assert.equal(r.find('GET', '/v1/agents/%E0%A4%A').kind, 'not_found', 'a malformed escape never matches');
});

test('router: duplicate and malformed templates are refused at registration', () => {
  const r = new Router<number>();
  r.add('GET', '/a/{id}', 1);
  assert.throws(() => r.add('GET', '/a/{id}', 2), /duplicate route GET \/a\/\{id\}/);
  assert.throws(() => r.add('GET', '/a/{x', 3), /malformed path segment/);
  assert.throws(() => r.add('GET', 'a', 4), /must start with/);
});
