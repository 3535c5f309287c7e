/**
 * `ctx.audit` (docs/modules.md "Audit"): the record of the action the route declares, built one way
 * for every handler; an undeclared action is a programming error, and so is a declared mutation
 * that answers success without its record.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Type from 'typebox';
import { pino } from 'pino';
import { App } from '../../src/http/app.js';
import { errors } from '../../src/contract/errors.js';
import { route, type AnyRoute } from '../../src/contract/route.js';
import { RecordingAuditSink } from '../../src/ledger/audit-sink.js';
import { SYSTEM_TENANT } from '../../src/ledger/record.js';
import type { Principal } from '../../src/auth/principal.js';
import type { Services } from '../../src/serve/services.js';

const TENANT = '0190a000-0000-7000-8000-000000000001';
const OTHER = '0190a000-0000-7000-8000-000000000002';
const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const principal = {
  kind: 'user',
  userId: 'u-1',
  actor: 'user:u-1',
  actorKind: 'user',
  credentialId: 's-1',
  superadmin: false,
  aal: 1,
  aalExpiresAt: null,
  amr: [],
  boundTenant: null,
  roleCeiling: null,
  grants: [{ tenant: TENANT, role: 'owner' }],
  expiresAt: null,
} as unknown as Principal;

const common = { stability: 'stable' as const, summary: 's', permission: 'thing:write' };
const Outcome = Type.Object({ ok: Type.Boolean() }, { additionalProperties: false });

const routes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: '/things',
    operationId: 'createThing',
    audit: 'thing.create',
    handler: async (ctx) => {
      await ctx.audit({ kind: 'thing', id: 't-1' }, { n: 1 });
      return { id: 't-1' };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/identity',
    operationId: 'identity',
    audit: 'thing.grant',
    auditChain: 'system',
    handler: async (ctx) => {
      await ctx.audit({ kind: 'thing', id: 't-2' });
      await ctx.audit({ kind: 'tenant', id: OTHER }, { from: 'a', to: 'b' }, { chain: OTHER });
      return { ok: true };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/login',
    operationId: 'login',
    audit: ['thing.login', 'thing.login_failed'],
    auditChain: 'system',
    body: Outcome,
    handler: async (ctx) => {
      if (!ctx.body.ok) {
        await ctx.audit({ kind: 'user', id: '' }, { reason: 'wrong' }, { action: 'thing.login_failed', as: { user: undefined } });
        throw errors.unauthenticated();
      }
      await ctx.audit({ kind: 'session', id: 's-9' }, { amr: ['pwd'] }, { as: { user: 'u-7' } });
      return { ok: true };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/undeclared',
    operationId: 'undeclared',
    audit: 'thing.create',
    handler: async (ctx) => {
      await ctx.audit({ kind: 'thing', id: 't-3' }, {}, { action: 'thing.delete' });
      return { ok: true };
    },
  }),
  route({
    ...common,
    method: 'PATCH',
    path: '/forgetful',
    operationId: 'forgetful',
    audit: 'thing.update',
    handler: () => ({ ok: true }),
  }),
  route({
    ...common,
    method: 'PATCH',
    path: '/unchanged',
    operationId: 'unchanged',
    audit: 'thing.update',
    handler: (ctx) => {
      ctx.unchanged();
      return { ok: true };
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/refused',
    operationId: 'refused',
    audit: 'thing.delete',
    handler: () => {
      throw errors.conflict('in use');
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/unaudited',
    operationId: 'unaudited',
    unaudited: 'a test route that stores nothing',
    handler: async (ctx) => {
      await ctx.audit({ kind: 'thing', id: 't-4' });
      return { ok: true };
    },
  }),
];

function makeApp() {
  const sink = new RecordingAuditSink();
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const app = new App({
    routes,
    services: { audit: sink } as unknown as Services,
    log: pino({ level: 'error' }, stream),
    tls: true,
    bodyLimit: 1024,
    timeoutMs: 5000,
    authenticate: async (ctx) => {
      Object.assign(ctx as object, { principal, tenant: TENANT });
    },
  });
  return { app, sink, lines };
}

test('ctx.audit: a tenant record carries the declared action, the caller, the request id and the trace', async () => {
  const { app, sink } = makeApp();
  const res = await app.request('POST', '/things', { headers: { 'x-request-id': 'req-1', traceparent: TRACE } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(sink.appended, [
    {
      tenant: TENANT,
      draft: {
        actor: 'user:u-1',
        actor_kind: 'user',
        action: 'thing.create',
        target_kind: 'thing',
        target_id: 't-1',
        meta: { n: 1, request_id: 'req-1', traceparent: TRACE },
      },
    },
  ]);
});

test('ctx.audit: identity records go to the system chain (or the chain named) with their meta as given', async () => {
  const { app, sink } = makeApp();
  const res = await app.request('POST', '/identity', { headers: { traceparent: TRACE } });
  assert.equal(res.status, 200, res.text);
  const who = { actor: 'user:u-1', actor_kind: 'user', action: 'thing.grant' };
  assert.deepEqual(sink.appended, [
    { tenant: SYSTEM_TENANT, draft: { ...who, target_kind: 'thing', target_id: 't-2' } },
    { tenant: OTHER, draft: { ...who, target_kind: 'tenant', target_id: OTHER, meta: { from: 'a', to: 'b' } } },
  ]);
});

test('ctx.audit: an outcome picks one of the declared actions; the acting user before authentication', async () => {
  const { app, sink } = makeApp();
  assert.equal((await app.request('POST', '/login', { body: { ok: false } })).status, 401);
  assert.equal((await app.request('POST', '/login', { body: { ok: true } })).status, 200);
  assert.deepEqual(
    sink.appended.map((a) => [a.tenant, a.draft.action, a.draft.actor, a.draft.actor_kind, a.draft.meta]),
    [
      [SYSTEM_TENANT, 'thing.login_failed', 'anonymous', 'anonymous', { reason: 'wrong' }],
      [SYSTEM_TENANT, 'thing.login', 'user:u-7', 'user', { amr: ['pwd'] }],
    ],
  );
});

test('ctx.audit: an action the route does not declare is refused (500), and nothing is appended', async () => {
  const { app, sink, lines } = makeApp();
  for (const path of ['/undeclared', '/unaudited']) {
    const res = await app.request('POST', path);
    assert.equal(res.status, 500, path);
    assert.equal((res.json() as { error: { message: string } }).error.message, 'internal error');
  }
  assert.deepEqual(sink.appended, []);
  const logged = lines.map((l) => (l['err'] as { message?: string } | undefined)?.message ?? '');
  assert.match(logged[0] ?? '', /route POST \/undeclared does not declare the audit action "thing.delete"/);
  assert.match(logged[1] ?? '', /route POST \/unaudited declares no audit action/);
});

test('ctx.audit: a declared mutation that answers success without its record is a 500 naming the route', async () => {
  const { app, sink, lines } = makeApp();
  const res = await app.request('PATCH', '/forgetful');
  assert.equal(res.status, 500);
  assert.match(
    String((lines[0]?.['err'] as { message?: string } | undefined)?.message),
    /route PATCH \/forgetful declares the audit action thing.update but its handler recorded nothing/,
  );
  // Nothing changed, said so: no record owed. A refused mutation owes none either.
  assert.equal((await app.request('PATCH', '/unchanged')).status, 200);
  assert.equal((await app.request('DELETE', '/refused')).status, 409);
  assert.deepEqual(sink.appended, []);
});
