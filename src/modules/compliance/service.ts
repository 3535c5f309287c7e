/**
 * Legal holds, and what holds and erasure requests share (docs/compliance.md; erasure-service.ts
 * executes erasures). A hold takes effect at once and is a veto:
 * while it is active, the record hooks refuse deletes and erasures of what it covers (409
 * `legal_hold`). Releasing a hold and executing an erasure are under dual control: both go through
 * the governance module's approval gate (quorum of distinct people, never the requester), answering
 * 202 `pending_approval` until an approved approval id is presented.
 *
 * Every step appends a ledger record and a custody event that names that record's seq and hash and
 * the people involved; `hold.placed`, `hold.released`, `erasure.completed` are written to the event log
 * in the transaction of their change and announced after its commit.
 */
import type { Transaction } from 'kysely';
import { ApiError, errors } from '../../contract/errors.js';
import type { RequestContext } from '../../http/context.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store-types.js';
import { assertTenantWritable, tenantOf } from '../../http/request-scope.js';
import { gateOnApproval, listDecisions, type Approval, type Plan } from '../governance/index.js';
import { resolveSubject } from './subject-refs.js';

export type Ctx = Pick<RequestContext, 'principal' | 'tenant' | 'services' | 'requestId' | 'audit'>;
export type Tx = Transaction<Database>;

export type HoldScope = 'tenant' | 'data_class' | 'subject';

export interface Hold {
  id: string;
  tenant_id: string;
  scope: HoldScope;
  subject_kind: string;
  subject_ref: string;
  data_class: string;
  matter: string;
  reason: string;
  title: string;
  on_behalf_of: string;
  status: 'active' | 'released';
  placed_by: string;
  released_by: string | null;
  release_approval_id: string | null;
  released_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CustodyEvent {
  id: string;
  record_kind: string;
  record_id: string;
  event: string;
  people: string[];
  approval_id: string | null;
  ledger_seq: number;
  ledger_hash: string;
  created_at: string;
}

export type Page<T> = { items: T[]; has_more: boolean; cursor?: string };

export function page<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const has_more = rows.length > limit;
  const items = has_more ? rows.slice(0, limit) : rows;
  return { items, has_more, ...(has_more && items.length > 0 ? { cursor: items[items.length - 1]!.id } : {}) };
}

export function who(ctx: Ctx): string {
  const p = ctx.principal;
  if (!p) throw errors.unauthenticated();
  return p.userId;
}

/** Appends the ledger record of a step and its custody event (tied to that record's seq and hash). */
export async function step(
  ctx: Ctx,
  kind: 'hold' | 'erasure',
  id: string,
  event: string,
  action: string,
  people: string[],
  approvalId: string | null,
  meta: Record<string, unknown>,
): Promise<CustodyEvent> {
  const tenant = tenantOf(ctx);
  const rec = await ctx.audit(
    { kind: kind === 'hold' ? 'legal_hold' : 'erasure_request', id },
    { ...meta, people, ...(approvalId ? { approval_id: approvalId } : {}) },
    { action },
  );
  const ev: CustodyEvent = {
    id: newId(),
    record_kind: kind,
    record_id: id,
    event,
    people,
    approval_id: approvalId,
    ledger_seq: Number(rec.seq),
    ledger_hash: rec.hash,
    created_at: nowTimestamp(),
  };
  await ctx.services.store.withTenant(tenant, (tx) =>
    tx
      .insertInto('cmp_custody')
      .values({ ...ev, tenant_id: tenant, people: JSON.stringify(people) })
      .execute(),
  );
  return ev;
}

export async function custodyEvents(store: Store, tenant: string, kind: 'hold' | 'erasure', id: string): Promise<CustodyEvent[]> {
  return store.withTenant(tenant, async (tx) => {
    const table = kind === 'hold' ? 'cmp_holds' : 'cmp_erasures';
    const exists = await tx.selectFrom(table).select('id').where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
    if (!exists) throw errors.notFound(kind === 'hold' ? 'legal hold' : 'erasure request');
    const rows = await tx
      .selectFrom('cmp_custody')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .where('record_id', '=', id)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      record_kind: r.record_kind,
      record_id: r.record_id,
      event: r.event,
      people: JSON.parse(r.people) as string[],
      approval_id: r.approval_id,
      ledger_seq: Number(r.ledger_seq),
      ledger_hash: r.ledger_hash,
      created_at: r.created_at,
    }));
  });
}

// ---------------------------------------------------------------- holds

function toHold(r: Database['cmp_holds']): Hold {
  return { ...r, scope: r.scope as HoldScope, status: r.status as Hold['status'] };
}

async function readHold(tx: Tx, tenant: string, id: string): Promise<Hold> {
  const r = await tx.selectFrom('cmp_holds').selectAll().where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
  if (!r) throw errors.notFound('legal hold');
  return toHold(r);
}

export interface HoldInput {
  scope?: HoldScope;
  subject_kind?: string;
  subject_ref?: string;
  data_class?: string;
  matter: string;
  reason: string;
  title?: string;
  on_behalf_of?: string;
}

/** Places a hold: `active` at once, custody chain started, `hold.placed` in the event log with it. */
export async function placeHold(ctx: Ctx, input: HoldInput): Promise<Hold> {
  const tenant = tenantOf(ctx);
  const me = who(ctx);
  const scope = input.scope ?? 'subject';
  if (scope === 'subject' && (!input.subject_kind || !input.subject_ref))
    throw errors.badRequest('a subject hold needs ' + 'subject_kind and subject_ref');
  if (scope === 'data_class' && !input.data_class) throw errors.badRequest('a data_class hold needs data_class');
  if (scope !== 'subject' && (input.subject_kind || input.subject_ref))
    throw errors.badRequest(`a ${scope} hold takes no ` + `subject_kind or subject_ref`);
  if (scope !== 'data_class' && input.data_class) throw errors.badRequest(`a ${scope} hold takes no data_class`);
  const now = nowTimestamp();
  const hold: Hold = {
    id: newId(),
    tenant_id: tenant,
    scope,
    subject_kind: input.subject_kind ?? '',
    subject_ref: input.subject_ref ?? '',
    data_class: input.data_class ?? '',
    matter: input.matter,
    reason: input.reason,
    title: input.title ?? '',
    on_behalf_of: input.on_behalf_of ?? '',
    status: 'active',
    placed_by: me,
    released_by: null,
    release_approval_id: null,
    released_at: null,
    created_at: now,
    updated_at: now,
  };
  await ctx.services.events.withEvents((emit) =>
    ctx.services.store.withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      // Stored by id, resolved in the transaction that stores it: the guards match the id (subject-refs.ts).
      if (scope === 'subject') hold.subject_ref = await resolveSubject(tx, tenant, hold.subject_kind, hold.subject_ref);
      await tx.insertInto('cmp_holds').values(hold).execute();
      const data = {
        id: hold.id,
        scope,
        subject_kind: hold.subject_kind,
        subject_ref: hold.subject_ref,
        data_class: hold.data_class,
        matter: hold.matter,
      };
      await emit({ type: 'hold.placed', tenant, subject: `legal_hold/${hold.id}`, data }, tx);
    }),
  );
  await step(ctx, 'hold', hold.id, 'placed', 'compliance.hold.place', [me], null, {
    scope,
    subject_kind: hold.subject_kind,
    subject_ref: hold.subject_ref,
    data_class: hold.data_class,
    matter: hold.matter,
    reason: hold.reason,
  });
  return hold;
}

export async function getHold(store: Store, tenant: string, id: string): Promise<Hold> {
  return store.withTenant(tenant, (tx) => readHold(tx, tenant, id));
}

export async function listHolds(store: Store, tenant: string, f: { limit: number; cursor?: string; status?: string }): Promise<Page<Hold>> {
  const rows = await store.withTenant(tenant, async (tx) => {
    let q = tx.selectFrom('cmp_holds').selectAll().where('tenant_id', '=', tenant);
    if (f.cursor) q = q.where('id', '>', f.cursor);
    if (f.status) q = q.where('status', '=', f.status);
    return (
      await q
        .orderBy('id')
        .limit(f.limit + 1)
        .execute()
    ).map(toHold);
  });
  return page(rows, f.limit);
}

/** The active holds covering a subject (any of `refs` of `kind`) or one of `dataClasses`; tenant-wide holds cover everything. */
export async function coveringHolds(
  tx: Tx,
  tenant: string,
  q: { kind?: string; refs?: string[]; dataClasses?: string[] },
): Promise<string[]> {
  const refs = q.refs ?? [];
  const classes = q.dataClasses ?? [];
  const rows = await tx
    .selectFrom('cmp_holds')
    .select('id')
    .where('tenant_id', '=', tenant)
    .where('status', '=', 'active')
    .where((eb) => {
      const ors = [eb('scope', '=', 'tenant')];
      if (q.kind && refs.length > 0)
        ors.push(eb.and([eb('scope', '=', 'subject'), eb('subject_kind', '=', q.kind), eb('subject_ref', 'in', refs)]));
      if (classes.length > 0) ors.push(eb.and([eb('scope', '=', 'data_class'), eb('data_class', 'in', classes)]));
      return eb.or(ors);
    })
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

export async function checkHold(
  store: Store,
  tenant: string,
  q: { subject_kind?: string; subject_ref?: string; data_class?: string },
  people = true,
): Promise<{ held: boolean; holds: string[] }> {
  if ((q.subject_kind === undefined) !== (q.subject_ref === undefined)) throw errors.badRequest('subject_kind and subject_ref go together');
  if (q.subject_kind === undefined && q.data_class === undefined)
    throw errors.badRequest('name a subject (subject_kind, ' + 'subject_ref) or a data_class');
  // A reference that names no record is 404, never `held: false`: a typo must not read as "free to delete".
  const holds = await store.withTenant(tenant, async (tx) =>
    coveringHolds(tx, tenant, {
      ...(q.subject_kind
        ? { kind: q.subject_kind, refs: [await resolveSubject(tx, tenant, q.subject_kind, q.subject_ref as string, people)] }
        : {}),
      ...(q.data_class ? { dataClasses: [q.data_class] } : {}),
    }),
  );
  return { held: holds.length > 0, holds };
}

/** The plan a release approval is bound to: the hold's exact scope. */
function releasePlan(h: Hold): Plan {
  return {
    action: 'compliance.hold.release',
    subject: `legal_hold/${h.id}`,
    params: { scope: h.scope, subject_kind: h.subject_kind, subject_ref: h.subject_ref, data_class: h.data_class, matter: h.matter },
  };
}

export async function approvers(ctx: Ctx, approvalId: string): Promise<string[]> {
  const ds = await listDecisions(ctx.services.store, tenantOf(ctx), approvalId);
  return ds.filter((d) => d.decision === 'approve').map((d) => d.user_id);
}

/**
 * Releases a hold under dual control. Without `approval_id`: opens an approval bound to the hold's
 * scope and answers `{pending}`; with one: consumes it (409 `approval_required` before quorum) and
 * the hold is `released`. A released hold answers 409 `conflict`.
 */
export async function releaseHold(
  ctx: Ctx,
  id: string,
  input: { approval_id?: string; reason?: string },
): Promise<{ pending: Approval } | { hold: Hold }> {
  const tenant = tenantOf(ctx);
  const me = who(ctx);
  const hold = await getHold(ctx.services.store, tenant, id);
  if (hold.status === 'released') throw errors.conflict('the legal hold is already released');
  const gate = await gateOnApproval(ctx, releasePlan(hold), input.approval_id, {
    reason: input.reason ?? `release legal hold ` + `${id} (${hold.matter})`,
  });
  if ('pending' in gate) {
    await step(ctx, 'hold', id, 'release_requested', 'compliance.hold.release_request', [me], gate.pending.id, {
      reason: input.reason ?? '',
    });
    return { pending: gate.pending };
  }
  const approval = gate.consumed;
  const now = nowTimestamp();
  const released = await ctx.services.events.withEvents((emit) =>
    ctx.services.store.withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      const res = await tx
        .updateTable('cmp_holds')
        .set({ status: 'released', released_by: me, release_approval_id: approval.id, released_at: now, updated_at: now })
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw errors.conflict('the legal hold is already released');
      await emit(
        { type: 'hold.released', tenant, subject: `legal_hold/${id}`, data: { id, approval_id: approval.id, released_by: me } },
        tx,
      );
      return readHold(tx, tenant, id);
    }),
  );
  const people = await approvers(ctx, approval.id);
  await step(ctx, 'hold', id, 'approved', 'compliance.hold.release_approve', [approval.requested_by, ...people], approval.id, {
    approvals: approval.approvals,
    quorum: approval.quorum,
    plan_hash: approval.plan_hash,
  });
  await step(ctx, 'hold', id, 'released', 'compliance.hold.release', [me], approval.id, { reason: input.reason ?? '' });
  return { hold: released };
}

/**
 * Guard of the record hooks: refuses `action` on `kind/id` while an active hold covers it. Holds
 * store ids; `legacy` adds the record's names for holds placed before references were resolved
 * that the migration could not resolve (an ambiguous name holds every record of that name).
 */
export async function guardAgainstHolds(
  tx: Tx,
  tenant: string,
  kind: string,
  id: string,
  what: string,
  legacy: string[] = [],
): Promise<void> {
  const holds = await coveringHolds(tx, tenant, { kind, refs: [id, ...legacy.filter((r) => r !== '')] });
  if (holds.length > 0)
    throw new ApiError('legal_hold', `a legal hold covers ${kind} ${id}; it ` + `cannot be ${what} (hold ${holds.join(', ')})`);
}

// ---------------------------------------------------------------- erasure requests
