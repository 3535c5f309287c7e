/** `/v1/users`: tenant members as users, user creation, superadmins, disable/enable (AAL3 for superadmins). */
import Type from 'typebox';
import { Limit, Uuid } from '../../contract/common.js';
import { ApiError, errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { identityOf } from '../../auth/runtime.js';
import type { RequestContext } from '../../http/context.js';
import { requireAal3 } from '../../auth/assurance.js';
import { roleIn } from '../../auth/authenticator.js';
import { findUser, userView } from '../../auth/identity-store.js';
import { assertPasswordPolicy, hashPassword } from '../../auth/passwords.js';
import type { Principal } from '../../auth/principal.js';
import { roleAtLeast, type Role } from '../../auth/roles.js';
import { Email, Password, RoleName, User } from './schemas.js';
import { insertUser, setUserStatus, userEvents } from './user-service.js';

const Member = Type.Object({ ...User.properties, role: RoleName }, { additionalProperties: false });
const MemberPage = Type.Object(
  { items: Type.Array(Member), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const UserPage = Type.Object(
  { items: Type.Array(User), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Uuid) }, { additionalProperties: false });
const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
const CreateBody = Type.Object(
  { email: Email, password: Password, role: Type.Optional(RoleName), superadmin: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

const common = { stability: 'stable' as const, tags: ['users'] };

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

function tenantOf(ctx: { tenant?: string }): string {
  if (ctx.tenant === undefined) throw errors.badRequest('tenant required');
  return ctx.tenant;
}

/** Users with a membership in `tenant` (with their role), paged by id. */
export async function listMembers(runtime: ReturnType<typeof identityOf>, tenant: string, limit: number, cursor: string | undefined) {
  const rows = await runtime.store.transaction(async (tx) => {
    let q = tx
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .selectAll('users')
      .select('memberships.role as role')
      .where('memberships.org_id', '=', tenant)
      .orderBy('users.id')
      .limit(limit + 1);
    if (cursor !== undefined) q = q.where('users.id', '>', cursor.toLowerCase());
    return q.execute();
  });
  const items = rows.slice(0, limit).map((r) => ({ ...userView(r), role: r.role as Role }));
  const hasMore = rows.length > limit;
  return { items, has_more: hasMore, ...(hasMore ? { cursor: items[items.length - 1]?.id as string } : {}) };
}

async function changeStatus(
  ctx: Pick<RequestContext<{ id: string }>, 'principal' | 'params' | 'services' | 'audit' | 'unchanged'>,
  status: 'active' | 'disabled',
) {
  const p = principalOf(ctx);
  const runtime = identityOf(ctx.services);
  const target = await runtime.store.transaction((tx) => findUser(tx, ctx.params.id));
  if (!target) throw errors.notFound('user');
  // DECISIONS.md "Assurance": disabling or enabling a superadmin needs AAL3.
  if (target.superadmin === 1) requireAal3(p);
  const result = await ctx.services.events.withEvents((emit) =>
    runtime.store.transaction(async (tx) => {
      const out = await setUserStatus(tx, runtime.store.capabilities, ctx.params.id, status);
      if (out.changed) await emit(await userEvents(tx, status === 'disabled' ? 'user.disabled' : 'user.enabled', out.user), tx);
      return out;
    }),
  );
  if (result.changed) {
    runtime.invalidate();
    await ctx.audit(
      { kind: 'user', id: target.id },
      { superadmin: target.superadmin === 1, ...(result.revoked ? { revoked: result.revoked } : {}) },
    );
  } else ctx.unchanged();
  return result.user;
}

export const userRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/users',
    operationId: 'listUsers',
    summary: 'Users who are members of the tenant, with their role',
    permission: 'user:read',
    query: ListQuery,
    response: MemberPage,
    handler: (ctx) => listMembers(identityOf(ctx.services), tenantOf(ctx), ctx.query.limit ?? 50, ctx.query.cursor),
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/users',
    operationId: 'createUser',
    summary: 'Create a user with a membership in the tenant (role ceiling: not above your own)',
    permission: 'user:admin',
    audit: ['user.create', 'membership.create'],
    auditChain: 'system',
    body: CreateBody,
    response: Member,
    status: 201,
    bodyLimit: 16 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const tenant = tenantOf(ctx);
      const runtime = identityOf(ctx.services);
      const role: Role = ctx.body.role ?? 'viewer';
      const superadmin = ctx.body.superadmin ?? false;
      if (superadmin && !p.superadmin) throw new ApiError('role_ceiling', 'only superadmins create superadmins');
      const mine = await roleIn(runtime, p, tenant);
      if (!roleAtLeast(mine, role)) throw new ApiError('role_ceiling', `cannot grant ${role} above your own role (${mine})`);
      assertPasswordPolicy(ctx.body.password);
      const passwordHash = await hashPassword(ctx.body.password, runtime.passwordParams);
      const user = await ctx.services.events.withEvents((emit) =>
        runtime.store.transaction(async (tx) => {
          const created = await insertUser(tx, { email: ctx.body.email, passwordHash, superadmin, tenant, role });
          await emit(await userEvents(tx, 'user.created', created, [tenant]), tx);
          return created;
        }),
      );
      await ctx.audit({ kind: 'user', id: user.id }, { email: user.email, superadmin });
      await ctx.audit({ kind: 'user', id: user.id }, { tenant, role }, { action: 'membership.create' });
      return reply.json({ ...user, role }, 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/users/superadmins',
    operationId: 'listSuperadmins',
    summary: 'Every superadmin, active or disabled',
    permission: 'system:admin',
    query: ListQuery,
    response: UserPage,
    handler: async (ctx) => {
      const limit = ctx.query.limit ?? 50;
      const rows = await identityOf(ctx.services).store.transaction(async (tx) => {
        let q = tx
          .selectFrom('users')
          .selectAll()
          .where('superadmin', '=', 1)
          .orderBy('id')
          .limit(limit + 1);
        if (ctx.query.cursor !== undefined) q = q.where('id', '>', ctx.query.cursor.toLowerCase());
        return q.execute();
      });
      const items = rows.slice(0, limit).map(userView);
      const hasMore = rows.length > limit;
      return { items, has_more: hasMore, ...(hasMore ? { cursor: items[items.length - 1]?.id as string } : {}) };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/users/{id}/disable',
    operationId: 'disableUser',
    summary: 'Disable a user: its sessions and API keys stop working at once (AAL3 for a superadmin; never the last active one)',
    permission: 'system:admin',
    audit: 'user.disable',
    auditChain: 'system',
    params: IdParams,
    response: User,
    handler: (ctx) => changeStatus(ctx, 'disabled'),
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/users/{id}/enable',
    operationId: 'enableUser',
    summary: 'Enable a disabled user (AAL3 for a superadmin); revoked credentials stay revoked',
    permission: 'system:admin',
    audit: 'user.enable',
    auditChain: 'system',
    params: IdParams,
    response: User,
    handler: (ctx) => changeStatus(ctx, 'active'),
  }),
];
