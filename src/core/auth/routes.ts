/** `/v1/auth/*`: login, logout, refresh, whoami (spec Endpoints → auth; DECISIONS.md shapes). */
import Type from 'typebox';
import { Timestamp, Uuid } from '../../contract/common.js';
import { ApiError, errors } from '../../contract/errors.js';
import { PUBLIC, route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import { identityOf } from '../../auth/runtime.js';
import { currentAal } from '../../auth/assurance.js';
import type { Principal } from '../../auth/principal.js';
import { permissionsOf } from '../../auth/roles.js';
import { createSession, revokeSession } from '../../auth/sessions.js';
import { Email, Password, RoleName } from '../users/schemas.js';
import { LOGIN_AUDIT, login } from './login.js';

const LoginBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
const IssuedSession = Type.Object(
  { token: Type.String({ description: 'svcs_… session token; shown once' }), session_id: Uuid, expires_at: Timestamp },
  { additionalProperties: false },
);
const WhoAmI = Type.Object(
  {
    kind: Type.Union([Type.Literal('user'), Type.Literal('token')]),
    user_id: Uuid,
    actor: Type.String(),
    superadmin: Type.Boolean(),
    aal: Type.Optional(Type.Integer()),
    amr: Type.Optional(Type.Array(Type.String())),
    grants: Type.Array(
      Type.Object({ tenant: Uuid, role: RoleName, permissions: Type.Array(Type.String()) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

const common = { stability: 'stable' as const, tags: ['auth'] };

function sessionOf(ctx: { principal?: Principal }): Principal {
  const p = ctx.principal;
  if (!p) throw errors.unauthenticated();
  if (p.kind !== 'user') throw errors.badRequest('this operation applies to sessions; API keys are revoked with DELETE /v1/tokens/{id}');
  return p;
}

export const authRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: '/v1/auth/login',
    operationId: 'login',
    summary: 'Exchange e-mail and password for a 12-hour session token',
    permission: PUBLIC,
    audit: LOGIN_AUDIT,
    auditChain: 'system',
    body: LoginBody,
    response: IssuedSession,
    bodyLimit: 8 * 1024,
    handler: login,
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/auth/logout',
    operationId: 'logout',
    summary: 'Revoke the calling session',
    permission: 'self:write',
    audit: 'auth.logout',
    auditChain: 'system',
    status: 204,
    handler: async (ctx) => {
      const p = sessionOf(ctx);
      const runtime = identityOf(ctx.services);
      await runtime.store.transaction((tx) => revokeSession(tx, p.credentialId, nowTimestamp()));
      runtime.invalidate();
      await ctx.audit({ kind: 'session', id: p.credentialId });
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/auth/refresh',
    operationId: 'refresh',
    summary: 'Rotate the calling session: a new token for 12 hours; the old one stops working at once',
    permission: 'self:write',
    audit: 'auth.refresh',
    auditChain: 'system',
    response: IssuedSession,
    handler: async (ctx) => {
      const p = sessionOf(ctx);
      const runtime = identityOf(ctx.services);
      const issued = await runtime.store.transaction(async (tx) => {
        // Conditional revoke: of two concurrent refreshes with one token, only one gets a new session.
        if (!(await revokeSession(tx, p.credentialId, nowTimestamp())))
          throw new ApiError('unauthenticated', 'invalid or expired credential');
        return createSession(tx, p.userId, { aal: p.aal, aalExpiresAt: p.aalExpiresAt, amr: p.amr.join(',') });
      });
      runtime.invalidate();
      await ctx.audit({ kind: 'session', id: issued.session_id }, { previous_session: p.credentialId });
      return issued;
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/auth/whoami',
    operationId: 'whoami',
    summary: 'The calling principal, its assurance level and its grants per tenant',
    permission: 'self:read',
    response: WhoAmI,
    handler: (ctx) => {
      const p = ctx.principal;
      if (!p) throw errors.unauthenticated();
      const catalog = identityOf(ctx.services).catalog;
      return {
        kind: p.kind,
        user_id: p.userId,
        actor: p.actor,
        superadmin: p.superadmin,
        ...(p.kind === 'user' ? { aal: currentAal(p), amr: p.amr } : {}),
        grants: p.grants.map((g) => ({ tenant: g.tenant, role: g.role, permissions: permissionsOf(g.role, catalog) })),
      };
    },
  }),
];
