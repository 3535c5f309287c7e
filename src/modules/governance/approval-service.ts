/**
 * Approvals under dual control (DECISIONS.md "Approvals"). An approval names an action, a subject and
 * the params of exactly what will be done; its `plan_hash` (hex SHA-256 of the RFC 8785 canonical
 * JSON of `{action, subject, params}`) binds the approval to that plan. Rules: the quorum counts
 * distinct people (user ids, never credentials: one person's session and API key count once), the
 * requester never counts and cannot decide, one rejection rejects, no break-glass, single use
 * (consumed atomically by the action it authorises), and an expired approval cannot be consumed.
 *
 * Every step appends a ledger record; `approval.requested` and `approval.resolved` are written to the
 * event log in the transaction of the change and announced after its commit. Other modules gate an action with {@link gateOnApproval}.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { ApiError, errors } from '../../contract/errors.js';
import type { RequestContext } from '../../http/context.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import { assertTenantWritable, isUniqueViolation, tenantOf } from '../../http/request-scope.js';
import type { Store } from '../../store/store.js';
import type { EventInput } from '../../events/event-types.js';

/** The approval services record through `ctx.audit` and name each action: other modules' routes call them too. */
export type ApprovalCtx = Pick<RequestContext, 'principal' | 'tenant' | 'services' | 'requestId' | 'audit'>;

/** What is to be done: the approval is bound to exactly this. */
export interface Plan {
  action: string;
  subject: string;
  params?: Record<string, unknown>;
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'cancelled' | 'consumed' | 'expired';

export interface Approval {
  id: string;
  tenant_id: string;
  action: string;
  subject: string;
  params: Record<string, unknown>;
  plan_hash: string;
  quorum: number;
  approvals: number;
  /** `expired`: pending or approved past `expires_at` */
  status: ApprovalStatus;
  reason: string;
  requested_by: string;
  expires_at: string;
  resolved_at: string | null;
  consumed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApprovalDecision {
  id: string;
  approval_id: string;
  user_id: string;
  actor: string;
  decision: 'approve' | 'reject';
  reason: string;
  created_at: string;
}

export const DEFAULT_QUORUM = 2;
export const DEFAULT_TTL_SECONDS = 24 * 3600;

/** hex SHA-256 of the RFC 8785 canonical JSON of `{action, subject, params}` (params default `{}`). */
export function planHash(plan: Plan): string {
  const text = canonicalize({ action: plan.action, subject: plan.subject, params: plan.params ?? {} });
  if (text === undefined) throw errors.badRequest('plan is not JSON');
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

type Row = {
  id: string;
  tenant_id: string;
  action: string;
  subject: string;
  params: string;
  plan_hash: string;
  quorum: number;
  status: string;
  reason: string;
  requested_by: string;
  requested_actor: string;
  expires_at: string;
  resolved_at: string | null;
  consumed_at: string | null;
  created_at: string;
  updated_at: string;
};

function toApproval(r: Row, approvals: number, now = nowTimestamp()): Approval {
  const live = r.status === 'pending' || r.status === 'approved';
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    action: r.action,
    subject: r.subject,
    params: JSON.parse(r.params) as Record<string, unknown>,
    plan_hash: r.plan_hash,
    quorum: Number(r.quorum),
    approvals,
    status: (live && r.expires_at <= now ? 'expired' : r.status) as ApprovalStatus,
    reason: r.reason,
    requested_by: r.requested_by,
    expires_at: r.expires_at,
    resolved_at: r.resolved_at,
    consumed_at: r.consumed_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The person behind the caller: quorum and the requester rule look at user ids, never credentials. */
function person(ctx: ApprovalCtx): { userId: string; actor: string } {
  const p = ctx.principal;
  if (!p) throw errors.unauthenticated();
  return { userId: p.userId, actor: p.actor };
}

function isoPlus(seconds: number): string {
  return new Date(Date.now() + seconds * 1000).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

async function readRow(
  tx: Parameters<Parameters<Store['withTenant']>[1]>[0],
  tenant: string,
  id: string,
): Promise<{ row: Row; approvals: number }> {
  const row = (await tx.selectFrom('gov_approvals').selectAll().where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst()) as
    Row | undefined;
  if (!row) throw errors.notFound('approval');
  const n = await tx
    .selectFrom('gov_approval_decisions')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('tenant_id', '=', tenant)
    .where('approval_id', '=', id)
    .where('decision', '=', 'approve')
    .executeTakeFirstOrThrow();
  return { row, approvals: Number(n.n) };
}

/** Opens an approval request for `plan`; the caller is the requester (who can never approve it). */
export async function requestApproval(
  ctx: ApprovalCtx,
  input: Plan & { quorum?: number; expires_in?: number; reason?: string },
): Promise<Approval> {
  const tenant = tenantOf(ctx);
  const me = person(ctx);
  const now = nowTimestamp();
  const params = input.params ?? {};
  const row: Row = {
    id: newId(),
    tenant_id: tenant,
    action: input.action,
    subject: input.subject,
    params: canonicalize(params) ?? '{}',
    plan_hash: planHash({ ...input, params }),
    quorum: input.quorum ?? DEFAULT_QUORUM,
    status: 'pending',
    reason: input.reason ?? '',
    requested_by: me.userId,
    requested_actor: me.actor,
    expires_at: isoPlus(input.expires_in ?? DEFAULT_TTL_SECONDS),
    resolved_at: null,
    consumed_at: null,
    created_at: now,
    updated_at: now,
  };
  const requested = {
    type: 'approval.requested',
    tenant,
    subject: `approval/${row.id}`,
    data: {
      id: row.id,
      action: row.action,
      subject: row.subject,
      plan_hash: row.plan_hash,
      quorum: row.quorum,
      requested_by: me.userId,
      expires_at: row.expires_at,
    },
  };
  await ctx.services.events.withEvents((emit) =>
    ctx.services.store.withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      await tx.insertInto('gov_approvals').values(row).execute();
      await emit(requested, tx);
    }),
  );
  const approval = toApproval(row, 0);
  await ctx.audit(
    { kind: 'approval', id: row.id },
    { action: row.action, subject: row.subject, plan_hash: row.plan_hash, quorum: row.quorum, expires_at: row.expires_at },
    { action: 'approval.request' },
  );
  return approval;
}

/** One approval, or 404 (another tenant's too). */
export async function getApproval(store: Store, tenant: string, id: string): Promise<Approval> {
  const { row, approvals } = await store.withTenant(tenant, (tx) => readRow(tx, tenant, id));
  return toApproval(row, approvals);
}

/** A keyset page of approvals in creation order; `status` filters on the effective status. */
export async function listApprovals(
  store: Store,
  tenant: string,
  f: { limit: number; cursor?: string; status?: string; action?: string },
): Promise<{ items: Approval[]; has_more: boolean; cursor?: string }> {
  const now = nowTimestamp();
  const rows = await store.withTenant(tenant, async (tx) => {
    let q = tx.selectFrom('gov_approvals').selectAll().where('tenant_id', '=', tenant);
    if (f.cursor) q = q.where('id', '>', f.cursor);
    if (f.action) q = q.where('action', '=', f.action);
    if (f.status === 'expired') q = q.where('status', 'in', ['pending', 'approved']).where('expires_at', '<=', now);
    else if (f.status === 'pending' || f.status === 'approved') q = q.where('status', '=', f.status).where('expires_at', '>', now);
    else if (f.status) q = q.where('status', '=', f.status);
    const page = (await q
      .orderBy('id')
      .limit(f.limit + 1)
      .execute()) as Row[];
    const counts =
      page.length === 0
        ? []
        : await tx
            .selectFrom('gov_approval_decisions')
            .select(['approval_id', (eb) => eb.fn.countAll<number | string>().as('n')])
            .where('tenant_id', '=', tenant)
            .where('decision', '=', 'approve')
            .where(
              'approval_id',
              'in',
              page.map((r) => r.id),
            )
            .groupBy('approval_id')
            .execute();
    const byId = new Map(counts.map((c) => [c.approval_id, Number(c.n)]));
    return page.map((r) => toApproval(r, byId.get(r.id) ?? 0, now));
  });
  const has_more = rows.length > f.limit;
  const items = has_more ? rows.slice(0, f.limit) : rows;
  return { items, has_more, ...(has_more && items.length > 0 ? { cursor: items[items.length - 1]!.id } : {}) };
}

/** The decisions on an approval, oldest first. */
export async function listDecisions(store: Store, tenant: string, id: string): Promise<ApprovalDecision[]> {
  return store.withTenant(tenant, async (tx) => {
    await readRow(tx, tenant, id);
    const rows = await tx
      .selectFrom('gov_approval_decisions')
      .select(['id', 'approval_id', 'user_id', 'actor', 'decision', 'reason', 'created_at'])
      .where('tenant_id', '=', tenant)
      .where('approval_id', '=', id)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...r, decision: r.decision as 'approve' | 'reject' }));
  });
}

/**
 * Records one person's decision. The requester gets 403; a second decision by the same person
 * (any credential) 409 `conflict`; a request no longer pending 409 `approval_invalid`. Reaching the
 * quorum approves; one rejection rejects.
 */
export async function decideApproval(
  ctx: ApprovalCtx,
  id: string,
  input: { decision: 'approve' | 'reject'; reason: string },
): Promise<{ decision: ApprovalDecision; approval: Approval }> {
  const tenant = tenantOf(ctx);
  const me = person(ctx);
  const now = nowTimestamp();
  const decision: ApprovalDecision = {
    id: newId(),
    approval_id: id,
    user_id: me.userId,
    actor: me.actor,
    decision: input.decision,
    reason: input.reason,
    created_at: now,
  };
  const out = await ctx.services.events.withEvents((emit) =>
    ctx.services.store
      .withTenant(tenant, async (tx) => {
        await assertTenantWritable(tx, tenant);
        // Take the row's write lock first (Postgres; SQLite's writer is single), so two approvers
        // deciding at once both see each other's decision when counting.
        const locked = await tx
          .updateTable('gov_approvals')
          .set({ updated_at: now })
          .where('tenant_id', '=', tenant)
          .where('id', '=', id)
          .executeTakeFirst();
        if (Number(locked.numUpdatedRows) !== 1) throw errors.notFound('approval');
        const { row } = await readRow(tx, tenant, id);
        if (row.requested_by === me.userId) throw errors.forbidden('the requester cannot decide their own approval request');
        const current = toApproval(row, 0, now);
        if (current.status !== 'pending') throw new ApiError('approval_invalid', `the approval is ${current.status}; decisions are closed`);
        await tx
          .insertInto('gov_approval_decisions')
          .values({ ...decision, tenant_id: tenant })
          .execute();
        const { approvals } = await readRow(tx, tenant, id);
        let status = 'pending';
        if (input.decision === 'reject') status = 'rejected';
        else if (approvals >= Number(row.quorum)) status = 'approved';
        if (status !== 'pending')
          await tx
            .updateTable('gov_approvals')
            .set({ status, resolved_at: now, updated_at: now })
            .where('tenant_id', '=', tenant)
            .where('id', '=', id)
            .execute();
        const a = toApproval({ ...row, status, resolved_at: status === 'pending' ? null : now, updated_at: now }, approvals, now);
        if (status !== 'pending') await emit(resolvedEvent(a), tx);
        return a;
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err))
          throw errors.conflict('this person has already decided on this approval ' + '(one decision per person, whatever the credential)');
        throw err;
      }),
  );
  await ctx.audit(
    { kind: 'approval', id },
    {
      decision: input.decision,
      reason: input.reason,
      user_id: me.userId,
      approvals: out.approvals,
      quorum: out.quorum,
      status: out.status,
    },
    { action: 'approval.decide' },
  );
  if (out.status === 'approved' || out.status === 'rejected') await resolved(ctx, out);
  return { decision, approval: out };
}

/** `approval.resolved`, written in the transaction that resolves the approval. */
function resolvedEvent(a: Approval): EventInput {
  return {
    type: 'approval.resolved',
    tenant: a.tenant_id,
    subject: `approval/${a.id}`,
    data: {
      id: a.id,
      status: a.status,
      action: a.action,
      subject: a.subject,
      plan_hash: a.plan_hash,
      approvals: a.approvals,
      quorum: a.quorum,
    },
  };
}

async function resolved(ctx: ApprovalCtx, a: Approval): Promise<void> {
  await ctx.audit(
    { kind: 'approval', id: a.id },
    { status: a.status, approvals: a.approvals, quorum: a.quorum, plan_hash: a.plan_hash },
    { action: 'approval.resolve' },
  );
}

/** Cancels a pending or approved (not yet consumed) approval. */
export async function cancelApproval(ctx: ApprovalCtx, id: string, reason = ''): Promise<Approval> {
  const tenant = tenantOf(ctx);
  const now = nowTimestamp();
  const out = await ctx.services.events.withEvents((emit) =>
    ctx.services.store.withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      const { row, approvals } = await readRow(tx, tenant, id);
      const res = await tx
        .updateTable('gov_approvals')
        .set({ status: 'cancelled', resolved_at: now, updated_at: now })
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .where('status', 'in', ['pending', 'approved'])
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw new ApiError('approval_invalid', `the approval is ${row.status}; it cannot be cancelled`);
      const a = toApproval({ ...row, status: 'cancelled', resolved_at: now, updated_at: now }, approvals, now);
      await emit(resolvedEvent(a), tx);
      return a;
    }),
  );
  await ctx.audit({ kind: 'approval', id }, { reason }, { action: 'approval.cancel' });
  await resolved(ctx, out);
  return out;
}

/**
 * Consumes an approved approval for `plan` (or its hash) exactly once: the status moves from
 * `approved` to `consumed` in one conditional update, so two callers cannot both use it. Pending:
 * 409 `approval_required`; expired, consumed, rejected, cancelled or another plan: 409 `approval_invalid`.
 */
export async function consumeApproval(ctx: ApprovalCtx, id: string, plan: Plan | { plan_hash: string }): Promise<Approval> {
  const tenant = tenantOf(ctx);
  const hash = 'plan_hash' in plan ? plan.plan_hash : planHash(plan);
  const now = nowTimestamp();
  const out = await ctx.services.store.withTenant(tenant, async (tx) => {
    const { row, approvals } = await readRow(tx, tenant, id);
    const current = toApproval(row, approvals, now);
    if (current.status === 'pending')
      throw new ApiError('approval_required', `the approval has ${approvals} ` + `of ${current.quorum} approvals`);
    if (current.status !== 'approved') throw new ApiError('approval_invalid', `the approval is ${current.status}`);
    if (row.plan_hash !== hash) throw new ApiError('approval_invalid', 'the plan changed since it was approved (plan_hash differs)');
    const res = await tx
      .updateTable('gov_approvals')
      .set({ status: 'consumed', consumed_at: now, updated_at: now })
      .where('tenant_id', '=', tenant)
      .where('id', '=', id)
      .where('status', '=', 'approved')
      .where('plan_hash', '=', hash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw new ApiError('approval_invalid', 'the approval was used or changed concurrently');
    return toApproval({ ...row, status: 'consumed', consumed_at: now, updated_at: now }, approvals, now);
  });
  await ctx.audit({ kind: 'approval', id }, { action: out.action, subject: out.subject, plan_hash: hash }, { action: 'approval.consume' });
  return out;
}

/**
 * The gate another module puts in front of an action needing dual control: without an approval id
 * it opens a request and answers `{pending}` (the route answers 202 `{"status":"pending_approval",
 * "approval_id"}`); with one it consumes it for exactly this plan or throws 409.
 */
export async function gateOnApproval(
  ctx: ApprovalCtx,
  plan: Plan,
  approvalId: string | undefined,
  opts: { quorum?: number; expires_in?: number; reason?: string } = {},
): Promise<{ pending: Approval } | { consumed: Approval }> {
  if (approvalId === undefined) return { pending: await requestApproval(ctx, { ...plan, ...opts }) };
  return { consumed: await consumeApproval(ctx, approvalId, plan) };
}

/** The 202 body of an action waiting for approval (DECISIONS.md). */
export function pendingApprovalBody(a: Approval): { status: 'pending_approval'; approval_id: string } {
  return { status: 'pending_approval', approval_id: a.id };
}
