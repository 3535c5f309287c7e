/**
 * What every handler of the agents/workspaces/accessmap areas needs from the request: the tenant it
 * acts in, the ledger actor, the audit append and the suspended-tenant rule (DECISIONS.md).
 */
import type { Transaction } from 'kysely';
import { ApiError, errors } from '../../contract/errors.js';
import type { RequestContext } from '../../http/context.js';
import type { Database } from '../../store/schema.js';
import { parseTraceparent } from '../../http/trace-context.js';

/** The tenant the request acts in; the authenticator resolves it (DECISIONS.md "Tenant resolution"). */
export function tenantOf(ctx: Pick<RequestContext, 'tenant'>): string {
  if (!ctx.tenant) throw errors.badRequest('tenant required');
  return ctx.tenant;
}

/** The ledger actor of the caller (`user:<id>`, `token:<id>`), or `system` outside a request. */
export function actorOf(ctx: Pick<RequestContext, 'principal'>): { actor: string; actor_kind: string } {
  const p = ctx.principal;
  return p ? { actor: p.actor, actor_kind: p.actorKind } : { actor: 'system', actor_kind: 'system' };
}

/** Appends one ledger record to the request tenant's chain; resolves once durable. */
export async function auditEvent(
  ctx: Pick<RequestContext, 'principal' | 'tenant' | 'services' | 'requestId'> & { headers?: Readonly<Record<string, string>> },
  action: string,
  target: { kind: string; id: string },
  meta: Record<string, unknown> = {},
): Promise<void> {
  // A valid W3C traceparent rides into meta, so the ledger can answer what happened under a trace (observability traces).
  const tp = parseTraceparent(ctx.headers?.['traceparent']);
  await ctx.services.audit.append(tenantOf(ctx), {
    ...actorOf(ctx),
    action,
    target_kind: target.kind,
    target_id: target.id,
    meta: {
      ...meta,
      request_id: ctx.requestId,
      ...(tp ? { traceparent: `${tp.version}-${tp.trace_id}-${tp.parent_id}-${tp.flags}` } : {}),
    },
  });
}

/** Refuses a mutation in a suspended tenant with 423 (reads continue; DECISIONS.md). */
export async function assertTenantWritable(tx: Transaction<Database>, tenant: string): Promise<void> {
  const row = await tx.selectFrom('tenants').select(['status']).where('id', '=', tenant).executeTakeFirst();
  if (!row) throw errors.notFound('tenant');
  if (row.status === 'suspended') throw new ApiError('tenant_suspended');
}

export { isUniqueViolation } from '../../store/store-error.js';
