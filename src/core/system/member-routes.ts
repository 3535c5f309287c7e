/** `GET /v1/members` and `POST /v1/memberships`: who belongs to the tenant, and granting roles (role ceiling). */
import Type from 'typebox';
import { Limit, Timestamp, Uuid } from '../../contract/common.js';
import { ApiError, errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import { identityOf } from '../../auth/runtime.js';
import { roleIn } from '../../auth/authenticator.js';
import { findUser, findUserByEmail } from '../../auth/identity-store.js';
import type { Principal } from '../../auth/principal.js';
import { isRole, roleAtLeast } from '../../auth/roles.js';
import { Email, RoleName } from '../users/schemas.js';
import { listMembers } from '../users/routes.js';

const Member = Type.Object(
  { user_id: Uuid, email: Type.String(), role: RoleName, status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]) },
  { additionalProperties: false },
);
const MemberPage = Type.Object(
  { items: Type.Array(Member), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Uuid) }, { additionalProperties: false });
const MembershipBody = Type.Object(
  { user_id: Type.Optional(Uuid), email: Type.Optional(Email), role: RoleName },
  { additionalProperties: false },
);
const Membership = Type.Object(
  { tenant: Uuid, user_id: Uuid, role: RoleName, created_at: Timestamp, updated_at: Timestamp },
  { additionalProperties: false },
);

const common = { stability: 'stable' as const, tags: ['system'] };

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

export const memberRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/members',
    operationId: 'listMembers',
    summary: 'Members of the tenant and their roles',
    permission: 'membership:read',
    query: ListQuery,
    response: MemberPage,
    handler: async (ctx) => {
      if (ctx.tenant === undefined) throw errors.badRequest('tenant required');
      const page = await listMembers(identityOf(ctx.services), ctx.tenant, ctx.query.limit ?? 50, ctx.query.cursor);
      return { ...page, items: page.items.map((u) => ({ user_id: u.id, email: u.email, role: u.role, status: u.status })) };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/memberships',
    operationId: 'putMembership',
    summary:
      "Change a member's role (never above your own role, nor over someone above you); adding an existing user who is not yet a " +
      'member takes a superadmin',
    permission: 'membership:admin',
    audit: ['membership.create', 'membership.update'],
    auditChain: 'system',
    body: MembershipBody,
    response: Membership,
    status: 201,
    bodyLimit: 4 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const tenant = ctx.tenant;
      if (tenant === undefined) throw errors.badRequest('tenant required');
      if ((ctx.body.user_id === undefined) === (ctx.body.email === undefined))
        throw errors.badRequest('give exactly one of user_id and email');
      const runtime = identityOf(ctx.services);
      const mine = await roleIn(runtime, p, tenant);
      const role = ctx.body.role;
      if (!roleAtLeast(mine, role)) throw new ApiError('role_ceiling', `cannot grant ${role} above your own role (${mine})`);
      const result = await runtime.store.transaction(async (tx) => {
        const user =
          ctx.body.user_id !== undefined
            ? await findUser(tx, ctx.body.user_id.toLowerCase())
            : await findUserByEmail(tx, ctx.body.email as string);
        const existing = user
          ? await tx.selectFrom('memberships').selectAll().where('user_id', '=', user.id).where('org_id', '=', tenant).executeTakeFirst()
          : undefined;
        // Only a superadmin brings a user who is not yet a member into a tenant (issue 30 item 5):
        // a tenant's admin changes the roles of its own members and creates new people with
        // POST /v1/users, but cannot pull in another tenant's people without their say. Such a
        // user is "not found", exactly as an unknown id or e-mail, so the answer reveals nothing.
        if (!user || (!existing && !p.superadmin)) throw errors.notFound('user');
        const at = nowTimestamp();
        if (existing) {
          if (isRole(existing.role) && !roleAtLeast(mine, existing.role))
            throw new ApiError('role_ceiling', `cannot change the role of a member above your own role (${mine})`);
          await tx
            .updateTable('memberships')
            .set({ role, updated_at: at })
            .where('user_id', '=', user.id)
            .where('org_id', '=', tenant)
            .execute();
          return {
            created: false,
            previous: existing.role,
            membership: { tenant, user_id: user.id, role, created_at: existing.created_at, updated_at: at },
          };
        }
        await tx.insertInto('memberships').values({ user_id: user.id, org_id: tenant, role, created_at: at, updated_at: at }).execute();
        return { created: true, previous: null, membership: { tenant, user_id: user.id, role, created_at: at, updated_at: at } };
      });
      runtime.invalidate();
      await ctx.audit(
        { kind: 'user', id: result.membership.user_id },
        {
          tenant,
          role,
          ...(result.previous ? { previous_role: result.previous } : {}),
        },
        { action: result.created ? 'membership.create' : 'membership.update' },
      );
      return reply.json(result.membership, result.created ? 201 : 200);
    },
  }),
];
