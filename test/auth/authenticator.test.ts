/** The authorizer's seams: the PDP only restricts, privileged reads need editor and are audited, env limits. */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { createSqliteTestStore, type TestStore } from '../helpers/stores.js';
import { bootstrap, createHarness, userWithRole, type Harness } from './harness.js';
import { identityRoutes } from '../helpers/identity-routes.js';
import { route, type AnyRoute } from '../../src/contract/route.js';
import type { PdpInput, PolicyDecisionPoint } from '../../src/auth/pdp.js';
import { rateLimitFromEnv } from '../../src/auth/runtime.js';

describe('authorizer seams', () => {
  let ts: TestStore;
  let h: Harness;
  let admin: { session: string; userId: string; tenant: string };
  const asked: PdpInput[] = [];
  let verdict: 'allow' | 'deny' = 'allow';
  // A decision point written against the interface: records what it is asked and answers `verdict`.
  const pdp: PolicyDecisionPoint = { engine: 'test', decide: async (input) => (asked.push(input), verdict) };
  const graph: AnyRoute = route({
    method: 'GET',
    path: '/v1/things/{id}/graph',
    stability: 'stable',
    operationId: 'thingGraph',
    summary: 'a privileged read',
    permission: 'thing:read',
    privileged: true,
    audit: 'thing.graph.read',
    params: Type.Object({ id: Type.String() }, { additionalProperties: false }),
    handler: () => ({ ok: true }),
  });

  before(async () => {
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    h = await createHarness(ts.store, { pdp, routes: [...identityRoutes, graph] });
    admin = await bootstrap(h);
  });
  after(async () => {
    await h?.dispose();
    await ts?.dispose();
  });

  test('the PDP is asked after the role check with principal, action and resource; its deny is 403', async () => {
    asked.length = 0;
    assert.equal((await h.call('GET', '/v1/members', { token: admin.session })).status, 200);
    const input = asked.at(-1)!;
    assert.deepEqual(
      [input.action, input.resource.kind, input.resource.tenant, input.principal.role, input.principal.id],
      ['membership:read', 'membership', admin.tenant, 'owner', `user:${admin.userId}`],
    );
    verdict = 'deny';
    const denied = await h.call('GET', '/v1/members', { token: admin.session });
    assert.equal(denied.status, 403);
    assert.match(denied.json().error.message, /denied by policy \(test\)/);
    verdict = 'allow';
  });

  test('the PDP cannot grant what roles deny', async () => {
    const viewer = await userWithRole(h, admin.session, admin.tenant, 'v@example.test', 'viewer');
    asked.length = 0;
    assert.equal((await h.call('GET', '/v1/members', { token: viewer.session })).status, 403);
    assert.equal(asked.length, 0, 'never consulted when the role check already denied');
  });

  test('privileged reads: viewer 403, editor 200 and one audit record on the tenant chain', async () => {
    const viewer = await userWithRole(h, admin.session, admin.tenant, 'v2@example.test', 'viewer');
    const editor = await userWithRole(h, admin.session, admin.tenant, 'e2@example.test', 'editor');
    assert.equal((await h.call('GET', '/v1/things/t1/graph', { token: viewer.session })).status, 403);
    const before = h.audit.appended.length;
    assert.equal((await h.call('GET', '/v1/things/t1/graph', { token: editor.session })).status, 200);
    const recs = h.audit.appended.slice(before);
    assert.deepEqual(
      recs.map((r) => [r.tenant, r.draft.action, r.draft.actor, r.draft.target_id]),
      [[admin.tenant, 'thing.graph.read', `user:${editor.id}`, 't1']],
    );
  });

  test('a tenant header on whoami is validated but does not matter', async () => {
    assert.equal(
      (await h.call('GET', '/v1/auth/whoami', { token: admin.session, tenant: '0190aaaa-0000-7000-8000-000000000000' })).status,
      200,
    );
    assert.equal((await h.call('GET', '/v1/auth/whoami', { token: admin.session, tenant: 'nope' })).status, 400);
  });
});

test('rate limits from the environment: defaults, overrides, 0 = off, garbage refused', () => {
  assert.deepEqual(rateLimitFromEnv({}), { ratePerSecond: 50, burst: 200 });
  assert.deepEqual(rateLimitFromEnv({ SERVICE_RATE_LIMIT_RPS: '0', SERVICE_RATE_LIMIT_BURST: '10' }), { ratePerSecond: 0, burst: 10 });
  assert.throws(() => rateLimitFromEnv({ SERVICE_RATE_LIMIT_RPS: 'fast' }), /SERVICE_RATE_LIMIT_RPS/);
});
