/** `/v1/tokens`: API keys (spec Authentication 6; DECISIONS.md role ceiling and concealment). */
import Type from 'typebox';
import { Limit, Text, Timestamp, Uuid } from '../../contract/common.js';
import { Rfc3339 } from '../../contract/rfc3339.js';
import { TTL_PATTERN } from '../../auth/token-ttl.js';
import { ApiError, errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import { identityOf } from '../../auth/runtime.js';
import { roleIn } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import { isRole, type Role } from '../../auth/roles.js';
import { RoleName } from '../users/schemas.js';
import {
  guardTokenDelete,
  assertCeiling,
  assertMayIssue,
  canManage,
  expiryOf,
  highestRole,
  insertToken,
  manageableToken,
  revokeToken,
  tokenEvents,
  tokenView,
  type IssuedToken,
  type TokenSpec,
  type TokenView,
} from './token-service.js';

const TokenFields = {
  id: Uuid,
  name: Type.String(),
  user_id: Uuid,
  role: RoleName,
  tenant: Type.Union([Uuid, Type.Null()]),
  superadmin: Type.Boolean(),
  created_at: Timestamp,
  expires_at: Type.Union([Timestamp, Type.Null()]),
  rotated_from: Type.Union([Uuid, Type.Null()]),
};
const TokenSchema = Type.Object(TokenFields, { additionalProperties: false });
const IssuedSchema = Type.Object(
  { ...TokenFields, token: Type.String({ description: 'svck_… secret; shown once, never again' }) },
  { additionalProperties: false },
);
const TokenPage = Type.Object(
  { items: Type.Array(TokenSchema), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Uuid) }, { additionalProperties: false });
const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
const IssueBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 100 }),
    role: Type.Optional(RoleName),
    tenant: Type.Optional(Uuid),
    superadmin: Type.Optional(Type.Boolean()),
    expires_at: Type.Optional(Rfc3339),
    ttl: Type.Optional(
      Text({
        pattern: TTL_PATTERN,
        description:
          'lifetime instead of expires_at: 30m, 12h, 90d, 2w, or never (the only way to a key that never expires); default: the ' +
          "server's SERVICE_TOKEN_DEFAULT_TTL (90d)",
      }),
    ),
  },
  { additionalProperties: false },
);

const common = { stability: 'stable' as const, tags: ['tokens'] };

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

export const tokenRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/tokens',
    operationId: 'listTokens',
    summary: 'API keys the caller may manage: its own, and those bound to tenants it administers (all, for a superadmin)',
    permission: 'token:read',
    query: ListQuery,
    response: TokenPage,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const limit = ctx.query.limit ?? 50;
      const runtime = identityOf(ctx.services);
      const byHeader = ctx.headers['x-service-tenant'] !== undefined ? ctx.tenant : undefined;
      const now = nowTimestamp();
      // Filtered here rather than in SQL so one rule (canManage) decides list, revoke and rotate alike.
      const visible = await runtime.store.transaction(async (tx) => {
        const out: TokenView[] = [];
        let after = ctx.query.cursor;
        for (;;) {
          let q = tx.selectFrom('api_tokens').selectAll().where('revoked_at', 'is', null).orderBy('id').limit(500);
          if (after !== undefined) q = q.where('id', '>', after);
          if (byHeader !== undefined) q = q.where('org_id', '=', byHeader);
          const rows = await q.execute();
          for (const r of rows) if ((r.expires_at === null || r.expires_at > now) && canManage(p, r)) out.push(tokenView(r));
          if (rows.length < 500 || out.length > limit) return out;
          after = rows[rows.length - 1]?.id;
        }
      });
      const items = visible.slice(0, limit);
      const hasMore = visible.length > limit;
      const last = hasMore ? items[items.length - 1]?.id : undefined;
      return { items, has_more: hasMore, ...(last ? { cursor: last } : {}) };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/tokens',
    operationId: 'createToken',
    summary: 'Issue an API key; the secret is in this answer only',
    permission: 'token:write',
    audit: 'token.create',
    auditChain: 'system',
    body: IssueBody,
    response: IssuedSchema,
    status: 201,
    bodyLimit: 8 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const runtime = identityOf(ctx.services);
      const superadmin = ctx.body.superadmin ?? false;
      if (superadmin && ctx.body.tenant !== undefined) throw errors.badRequest('a superadmin token is not bound to a tenant');
      if (p.boundTenant !== null && ctx.body.tenant !== undefined && ctx.body.tenant !== p.boundTenant)
        throw errors.forbidden('this API key is bound to another tenant');
      const tenant = superadmin ? null : (ctx.body.tenant ?? ctx.tenant ?? null);
      let ceiling: Role | undefined;
      if (tenant !== null) {
        ceiling = await roleIn(runtime, p, tenant);
        const info = await runtime.tenant(tenant);
        if (info?.status === 'suspended') throw new ApiError('tenant_suspended');
      } else ceiling = highestRole(p);
      const role = ctx.body.role ?? ceiling ?? 'viewer';
      if (!isRole(role)) throw errors.badRequest('unknown role');
      // The ceiling first (the more telling refusal), then whether this caller may issue at all.
      assertCeiling(p, { role, tenant, superadmin });
      assertMayIssue(p, tenant);
      const expiresAt = expiryOf(p, ctx.body, runtime.tokenDefaultTtlMs, runtime.now());
      const spec: TokenSpec = { userId: p.userId, name: ctx.body.name, role, tenant, superadmin, expiresAt };
      const issued = await ctx.services.events.withEvents((emit) =>
        runtime.store.transaction(async (tx) => {
          const key = await insertToken(tx, spec);
          await emit(await tokenEvents(tx, 'token.issued', key), tx);
          return key;
        }),
      );
      await ctx.audit(
        { kind: 'token', id: issued.id },
        {
          name: issued.name,
          role,
          tenant,
          superadmin,
          owner: p.userId,
          expires_at: expiresAt,
        },
      );
      return reply.json(issued, 201);
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/tokens/{id}',
    operationId: 'revokeToken',
    summary: 'Revoke an API key at once',
    permission: 'token:write',
    audit: 'token.revoke',
    auditChain: 'system',
    params: IdParams,
    status: 204,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const runtime = identityOf(ctx.services);
      // A legal hold on the token or its owner vetoes the revoke (docs/compliance.md "The hold as a veto").
      const target = await runtime.store.transaction((tx) => manageableToken(tx, p, ctx.params.id));
      await guardTokenDelete(runtime.store, ctx.services.hooks, target);
      const row = await ctx.services.events.withEvents((emit) =>
        runtime.store.transaction(async (tx) => {
          const found = await manageableToken(tx, p, ctx.params.id);
          if (!(await revokeToken(tx, found.id))) throw errors.notFound('token');
          await emit(await tokenEvents(tx, 'token.revoked', tokenView(found)), tx);
          return found;
        }),
      );
      runtime.invalidate();
      await ctx.audit({ kind: 'token', id: row.id }, { owner: row.user_id, tenant: row.org_id });
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/tokens/{id}/rotate',
    operationId: 'rotateToken',
    summary: 'Replace an API key with a new one of the same specification; the old one is revoked in the same transaction',
    permission: 'token:write',
    audit: 'token.rotate',
    auditChain: 'system',
    params: IdParams,
    response: IssuedSchema,
    status: 201,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const runtime = identityOf(ctx.services);
      const result = await ctx.services.events.withEvents((emit) =>
        runtime.store.transaction(async (tx): Promise<{ old: string; issued: IssuedToken }> => {
          const old = await manageableToken(tx, p, ctx.params.id);
          assertMayIssue(p, old.org_id);
          const role = isRole(old.role) ? old.role : 'viewer';
          // Rotating someone else's key hands its secret to the caller: the ceiling applies as at issue.
          if (old.user_id !== p.userId) assertCeiling(p, { role, tenant: old.org_id, superadmin: old.superadmin === 1 });
          if (!(await revokeToken(tx, old.id))) throw errors.notFound('token');
          const issued = await insertToken(tx, {
            userId: old.user_id,
            name: old.name,
            role,
            tenant: old.org_id,
            superadmin: old.superadmin === 1,
            expiresAt: old.expires_at,
            rotatedFrom: old.id,
          });
          await emit(await tokenEvents(tx, 'token.rotated', issued), tx);
          return { old: old.id, issued };
        }),
      );
      runtime.invalidate();
      await ctx.audit({ kind: 'token', id: result.issued.id }, { previous_token: result.old, tenant: result.issued.tenant });
      return reply.json(result.issued, 201);
    },
  }),
];
