import { test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { compileRoutes, RouteTableError } from '../../src/contract/registry.js';
import { PUBLIC, route, type AnyRoute } from '../../src/contract/route.js';
import { allRoutes } from '../../src/routes.js';

const base = { stability: 'stable' as const, summary: 's', handler: () => ({}) };

test('route table: an unservable route stops startup naming its method and path', () => {
  const bad: Array<[AnyRoute, RegExp]> = [
    [route({ ...base, method: 'GET', path: '/v1/x', operationId: 'a', permission: '' }), /route GET \/v1\/x: permission "" is not/],
    [route({ ...base, method: 'GET', path: '/v1/x', operationId: 'b', permission: 'Agent Read' }), /route GET \/v1\/x: permission/],
    [
      route({
        ...base,
        method: 'POST',
        path: '/v1/y',
        operationId: 'c',
        permission: 'agent:write',
        unaudited: 'a test route that stores nothing',
        body: Type.Object({ a: Type.String() }),
      }),
      /route POST \/v1\/y: body schema must set additionalProperties: false/,
    ],
    [
      route({
        ...base,
        method: 'GET',
        path: '/v1/z',
        operationId: 'd',
        permission: 'agent:read',
        query: Type.Object({ q: Type.String() }),
      }),
      /route GET \/v1\/z: query schema must set additionalProperties: false/,
    ],
    [
      route({ ...base, method: 'GET', path: '/v1/access', operationId: 'e', permission: 'agent:read', privileged: true }),
      /privileged read must name its audit action/,
    ],
    [
      route({ ...base, stability: 'beta', method: 'GET', path: '/v1/beta', operationId: 'f', permission: 'x:y:read' }),
      /beta routes live under \/v1\/m\//,
    ],
    [
      {
        ...base,
        method: 'GET',
        path: '/v1/s',
        operationId: 'g',
        permission: PUBLIC,
        response: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } },
      } as unknown as AnyRoute,
      /route GET \/v1\/s: response schema does not compile/,
    ],
  ];
  for (const [r, pattern] of bad)
    assert.throws(
      () => compileRoutes([r]),
      (err: Error) => err instanceof RouteTableError && pattern.test(err.message),
      pattern.source,
    );
  const dup = route({ ...base, method: 'GET', path: '/v1/d', operationId: 'same', permission: PUBLIC });
  assert.throws(() => compileRoutes([dup, { ...dup, path: '/v1/e' }]), /duplicate operationId same/);
});

test('route table: the real table compiles, and every non-public route declares a permission', () => {
  const compiled = compileRoutes(allRoutes());
  assert.ok(compiled.length > 0);
  for (const r of compiled) {
    assert.ok(r.spec.permission === PUBLIC || /:/.test(r.spec.permission), `${r.spec.method} ${r.spec.path}`);
    if (r.spec.permission === PUBLIC) assert.ok(r.spec.setupExempt || r.spec.path.startsWith('/v1/'), `${r.spec.path} public`);
  }
});

test('route table: a mutation declares its audit action or why it records nothing, else startup stops naming it', () => {
  const m = { ...base, path: '/v1/m', operationId: 'm', permission: 'agent:write' };
  const bad: Array<[AnyRoute, RegExp]> = [
    ...(['POST', 'PUT', 'PATCH', 'DELETE'] as const).map((method): [AnyRoute, RegExp] => [
      route({ ...m, method }),
      new RegExp(`route ${method} /v1/m: a mutation must declare its audit action, or \`unaudited\``),
    ]),
    [route({ ...m, method: 'POST', audit: 'agent.create', unaudited: 'a test route' }), /both an audit action and `unaudited`/],
    [route({ ...m, method: 'POST', unaudited: ' ' }), /`unaudited` must say why/],
    [route({ ...m, method: 'POST', audit: 'Agent Create' }), /audit action "Agent Create" is not a dotted/],
    [route({ ...m, method: 'POST', audit: ['agent.create', 'agent.create'] }), /declared twice/],
    [route({ ...m, method: 'GET', auditChain: 'system' }), /`auditChain` without an audit action/],
  ];
  for (const [r, pattern] of bad)
    assert.throws(
      () => compileRoutes([r]),
      (err: Error) => err instanceof RouteTableError && pattern.test(err.message),
      pattern.source,
    );
  // A read needs neither; a mutation with either compiles.
  assert.equal(compileRoutes([route({ ...m, method: 'GET' })]).length, 1);
  assert.deepEqual(compileRoutes([route({ ...m, method: 'POST', audit: ['a.b', 'a.c'] })])[0]?.auditActions, ['a.b', 'a.c']);
  assert.deepEqual(compileRoutes([route({ ...m, method: 'DELETE', unaudited: 'a test route that stores nothing' })])[0]?.auditActions, []);
});

test('route table: every served mutation declares an audit action or an unaudited reason', () => {
  for (const r of compileRoutes(allRoutes())) {
    if (r.spec.method === 'GET') continue;
    assert.ok(r.auditActions.length > 0 || (r.spec.unaudited ?? '').length > 0, `${r.spec.method} ${r.spec.path}`);
  }
});
