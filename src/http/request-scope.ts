/**
 * What every request handler needs from its request: the tenant it acts in, the ledger actor and the
 * suspended-tenant rule (DECISIONS.md). Moved here from core/agents: modules and core areas share it.
 */
import type { Transaction } from 'kysely';
import { ApiError, errors } from '../contract/errors.js';
import type { AuditOptions, AuditTarget, RequestContext } from './context.js';
import type { CompiledRoute } from '../contract/registry.js';
import { SYSTEM_TENANT, type AuditDraft, type AuditRecord } from '../ledger/record.js';
import type { Database } from '../store/schema.js';
import { parseTraceparent } from './trace-context.js';

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

/** What `appendAudit` needs of a request. */
export type AuditingContext = Pick<RequestContext, 'principal' | 'tenant' | 'services' | 'requestId' | 'headers'>;

/**
 * `ctx.audit` (context.ts): the record of one of the route's declared actions. Tenant-chain records carry
 * the request id and, when the request had a valid W3C traceparent, the trace (observability traces);
 * identity records (`auditChain: 'system'`) carry their meta as given (docs/auth.md lists them).
 */
export function appendAudit(
  ctx: AuditingContext,
  route: CompiledRoute,
  target: AuditTarget,
  meta?: Record<string, unknown>,
  opts?: AuditOptions,
): Promise<AuditRecord> {
  const declared = route.auditActions;
  const action = opts?.action ?? declared[0];
  if (action === undefined) throw new Error(`route ${route.spec.method} ${route.spec.path} declares no audit action`);
  if (opts?.action !== undefined && !declared.includes(action))
    throw new Error(`route ${route.spec.method} ${route.spec.path} does not declare the audit action ${JSON.stringify(action)}`);
  const as = opts?.as;
  const actor = as ? userActor(as.user) : actorOf(ctx);
  if (route.spec.auditChain === 'system') {
    const draft: AuditDraft = { ...actor, action, target_kind: target.kind, target_id: target.id, ...(meta ? { meta } : {}) };
    return ctx.services.audit.append(opts?.chain ?? SYSTEM_TENANT, draft, opts?.events);
  }
  const tp = parseTraceparent(ctx.headers['traceparent']);
  const draft: AuditDraft = {
    ...actor,
    action,
    target_kind: target.kind,
    target_id: target.id,
    meta: {
      ...meta,
      request_id: ctx.requestId,
      ...(tp ? { traceparent: `${tp.version}-${tp.trace_id}-${tp.parent_id}-${tp.flags}` } : {}),
    },
  };
  return ctx.services.audit.append(opts?.chain ?? tenantOf(ctx), draft, opts?.events);
}

/** A user acting before a token authenticates them (login, setup), or `anonymous`. */
function userActor(userId: string | undefined): { actor: string; actor_kind: string } {
  return userId ? { actor: `user:${userId}`, actor_kind: 'user' } : { actor: 'anonymous', actor_kind: 'anonymous' };
}

/** Refuses a mutation in a suspended tenant with 423 (reads continue; DECISIONS.md). */
export async function assertTenantWritable(tx: Transaction<Database>, tenant: string): Promise<void> {
  const row = await tx.selectFrom('tenants').select(['status']).where('id', '=', tenant).executeTakeFirst();
  if (!row) throw errors.notFound('tenant');
  if (row.status === 'suspended') throw new ApiError('tenant_suspended');
}

export { isUniqueViolation } from '../store/store-error.js';
