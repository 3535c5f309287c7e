/** `/v1/system/orgs*` and `/v1/system/residency`: tenants, superadmin only; region and status need AAL3. */
import Type from 'typebox';
import { Limit, Uuid } from '../../contract/common.js';
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import { identityOf } from '../../auth/runtime.js';
import type { RequestContext } from '../../http/context.js';
import { requireAal3 } from '../../auth/assurance.js';
import { findLiveTenant } from '../../auth/identity-store.js';
import type { Principal } from '../../auth/principal.js';
import { Organization, OrgName, Region } from '../users/schemas.js';
import { createOrg, orgCreateMeta, DEFAULT_REGION, type OrgView } from './org-service.js';

const OrgPage = Type.Object(
  { items: Type.Array(Organization), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Uuid) }, { additionalProperties: false });
const TenantParams = Type.Object({ tenant_id: Uuid }, { additionalProperties: false });
const CreateBody = Type.Object({ name: OrgName, region: Type.Optional(Region) }, { additionalProperties: false });
const RegionBody = Type.Object({ region: Region }, { additionalProperties: false });
const StatusBody = Type.Object(
  { status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]) },
  { additionalProperties: false },
);
const Residency = Type.Object(
  {
    default_region: Type.String(),
    items: Type.Array(Type.Object({ tenant_id: Uuid, name: Type.String(), region: Type.String() }, { additionalProperties: false })),
    has_more: Type.Boolean(),
    cursor: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const common = { stability: 'stable' as const, tags: ['system'], permission: 'system:admin' };

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

type Runtime = ReturnType<typeof identityOf>;

async function listOrgs(
  runtime: Runtime,
  limit: number,
  cursor: string | undefined,
): Promise<{ items: OrgView[]; has_more: boolean; cursor?: string }> {
  const rows = await runtime.store.transaction(async (tx) => {
    let q = tx
      .selectFrom('tenants')
      .select(['id', 'name', 'region', 'status', 'created_at'])
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .limit(limit + 1);
    if (cursor !== undefined) q = q.where('id', '>', cursor.toLowerCase());
    return q.execute();
  });
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { items, has_more: hasMore, ...(hasMore ? { cursor: items[items.length - 1]?.id as string } : {}) };
}

/** Update one column of a live tenant and audit it on the tenant's chain with the old and new value. */
async function updateOrg(
  ctx: Pick<RequestContext<{ tenant_id: string }>, 'principal' | 'params' | 'services' | 'audit' | 'unchanged'>,
  field: 'region' | 'status',
  value: string,
): Promise<OrgView> {
  const p = principalOf(ctx);
  requireAal3(p);
  const runtime = identityOf(ctx.services);
  const id = ctx.params.tenant_id.toLowerCase();
  const { before, after } = await runtime.store.transaction(async (tx) => {
    const current = await findLiveTenant(tx, id);
    if (!current) throw errors.notFound('tenant');
    await tx
      .updateTable('tenants')
      .set({ [field]: value })
      .where('id', '=', id)
      .execute();
    return { before: current, after: { ...current, [field]: value } as OrgView };
  });
  runtime.invalidate();
  if (before[field] !== value) await ctx.audit({ kind: 'tenant', id }, { from: before[field], to: value }, { chain: id });
  else ctx.unchanged();
  return after;
}

export const orgRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/system/orgs',
    operationId: 'listOrgs',
    summary: 'Every live organization (tenant)',
    query: ListQuery,
    response: OrgPage,
    handler: (ctx) => listOrgs(identityOf(ctx.services), ctx.query.limit ?? 50, ctx.query.cursor),
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/system/orgs',
    operationId: 'createOrg',
    summary: 'Create an organization; its audit chain starts with org.create',
    audit: 'org.create',
    auditChain: 'system',
    body: CreateBody,
    response: Organization,
    status: 201,
    bodyLimit: 8 * 1024,
    handler: async (ctx) => {
      principalOf(ctx);
      const runtime = identityOf(ctx.services);
      const org = await runtime.store.transaction((tx) => createOrg(tx, runtime, { name: ctx.body.name, region: ctx.body.region }));
      runtime.invalidate();
      // Seq 1 of the new tenant's chain (DECISIONS.md "Audit ledger").
      await ctx.audit({ kind: 'tenant', id: org.id }, orgCreateMeta(org), { chain: org.id });
      return reply.json(org, 201);
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/system/orgs/{tenant_id}',
    operationId: 'deleteOrg',
    summary: 'Delete an organization (soft: its audit chain stays verifiable); its members and keys lose access at once',
    audit: 'org.delete',
    auditChain: 'system',
    params: TenantParams,
    status: 204,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const runtime = identityOf(ctx.services);
      const id = ctx.params.tenant_id.toLowerCase();
      await runtime.store.transaction(async (tx) => {
        if (!(await findLiveTenant(tx, id))) throw errors.notFound('tenant');
        await tx.updateTable('tenants').set({ deleted_at: nowTimestamp() }).where('id', '=', id).execute();
      });
      runtime.invalidate();
      await ctx.audit({ kind: 'tenant', id }, undefined, { chain: id });
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'PUT',
    path: '/v1/system/orgs/{tenant_id}/region',
    operationId: 'setOrgRegion',
    summary: 'Set the data-residency region of an organization (AAL3)',
    audit: 'org.region',
    auditChain: 'system',
    params: TenantParams,
    body: RegionBody,
    response: Organization,
    bodyLimit: 4 * 1024,
    handler: (ctx) => updateOrg(ctx, 'region', ctx.body.region),
  }),
  route({
    ...common,
    method: 'PUT',
    path: '/v1/system/orgs/{tenant_id}/status',
    operationId: 'setOrgStatus',
    summary: 'Suspend or reactivate an organization (AAL3); a suspended one refuses mutations with 423',
    audit: 'org.status',
    auditChain: 'system',
    params: TenantParams,
    body: StatusBody,
    response: Organization,
    bodyLimit: 4 * 1024,
    handler: (ctx) => updateOrg(ctx, 'status', ctx.body.status),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/system/residency',
    operationId: 'residency',
    summary: 'Where each organization’s data resides (its region)',
    query: ListQuery,
    response: Residency,
    handler: async (ctx) => {
      const page = await listOrgs(identityOf(ctx.services), ctx.query.limit ?? 50, ctx.query.cursor);
      return {
        default_region: DEFAULT_REGION,
        items: page.items.map((o) => ({ tenant_id: o.id, name: o.name, region: o.region })),
        has_more: page.has_more,
        ...(page.cursor ? { cursor: page.cursor } : {}),
      };
    },
  }),
];
