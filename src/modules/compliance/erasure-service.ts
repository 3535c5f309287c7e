/**
 * Erasure requests (docs/compliance.md "Erasure"): registered without destroying anything, executed
 * under dual control through the governance approval gate, refused while a legal hold covers the
 * subject, and answered with a receipt naming what was and was not erased.
 */
import { ApiError, errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store-types.js';
import { assertTenantWritable, tenantOf } from '../../http/request-scope.js';
import { gateOnApproval, type Approval, type Plan } from '../governance/index.js';
import { aliasDigest, erasureOffload, reclaimAfterErasure, runErasure } from './erase.js';
import { resolveSubject } from './subject-refs.js';
import { approvers, coveringHolds, page, step, who, type Ctx, type Page, type Tx } from './service.js';
export interface Erasure {
  id: string;
  tenant_id: string;
  case_ref: string;
  subject_kind: string;
  subject_ref: string;
  aliases: string[];
  data_classes: string[];
  reason: string;
  status: 'received' | 'pending_approval' | 'completed';
  requested_by: string;
  approval_id: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

function toErasure(r: Database['cmp_erasures']): Erasure {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    case_ref: r.case_ref,
    subject_kind: r.subject_kind,
    subject_ref: r.subject_ref,
    aliases: JSON.parse(r.aliases) as string[],
    data_classes: JSON.parse(r.data_classes) as string[],
    reason: r.reason,
    status: r.status as Erasure['status'],
    requested_by: r.requested_by,
    approval_id: r.approval_id,
    completed_at: r.completed_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

async function readErasure(tx: Tx, tenant: string, id: string): Promise<Database['cmp_erasures']> {
  const r = await tx.selectFrom('cmp_erasures').selectAll().where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
  if (!r) throw errors.notFound('erasure request');
  return r;
}

export interface ErasureInput {
  case_ref: string;
  subject_kind?: string;
  subject_ref: string;
  aliases?: string[];
  data_classes?: string[];
  reason?: string;
}

/** Registers an erasure request: `received`; destroys nothing. */
export async function registerErasure(ctx: Ctx, input: ErasureInput): Promise<Erasure> {
  const tenant = tenantOf(ctx);
  const me = who(ctx);
  const now = nowTimestamp();
  const row: Database['cmp_erasures'] = {
    id: newId(),
    tenant_id: tenant,
    case_ref: input.case_ref,
    subject_kind: input.subject_kind ?? 'user',
    subject_ref: input.subject_ref,
    aliases: JSON.stringify([...new Set(input.aliases ?? [])]),
    data_classes: JSON.stringify([...new Set(input.data_classes ?? [])]),
    reason: input.reason ?? '',
    status: 'received',
    requested_by: me,
    approval_id: null,
    receipt: null,
    completed_at: null,
    created_at: now,
    updated_at: now,
  };
  await ctx.services.store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    // The subject by id, as holds store theirs: the hold check at execution compares ids (subject-refs.ts).
    row.subject_ref = await resolveSubject(tx, tenant, row.subject_kind, row.subject_ref);
    await tx.insertInto('cmp_erasures').values(row).execute();
  });
  await step(ctx, 'erasure', row.id, 'received', 'compliance.erasure.register', [me], null, {
    case_ref: row.case_ref,
    subject_kind: row.subject_kind,
  });
  return toErasure(row);
}

export async function getErasure(store: Store, tenant: string, id: string): Promise<Erasure> {
  return toErasure(await store.withTenant(tenant, (tx) => readErasure(tx, tenant, id)));
}

export async function listErasures(
  store: Store,
  tenant: string,
  f: { limit: number; cursor?: string; status?: string },
): Promise<Page<Erasure>> {
  const rows = await store.withTenant(tenant, async (tx) => {
    let q = tx.selectFrom('cmp_erasures').selectAll().where('tenant_id', '=', tenant);
    if (f.cursor) q = q.where('id', '>', f.cursor);
    if (f.status) q = q.where('status', '=', f.status);
    return (
      await q
        .orderBy('id')
        .limit(f.limit + 1)
        .execute()
    ).map(toErasure);
  });
  return page(rows, f.limit);
}

function erasurePlan(e: Erasure): Plan {
  return {
    action: 'compliance.erasure.execute',
    subject: `erasure_request/${e.id}`,
    params: {
      subject_kind: e.subject_kind,
      subject_ref: e.subject_ref,
      aliases_sha256: e.aliases.map(aliasDigest),
      data_classes: e.data_classes,
    },
  };
}

/** What execution leaves in place, stated on every receipt (docs/compliance.md "What is not erased"). */
export const NOT_ERASED = [
  'audit ledger: that a record existed, who acted (actor id), on what (target id), when, and the action (kept by design); the meta ' +
    'commitment stays in place of the meta',
  'the erasure request: the subject id and the SHA-256 of each alias (the receipt must say whose data it was)',
  'free text of a record is redacted (identifiers replaced by "[erased]", ASCII case folded), the record itself stays: agents, API ' +
    'keys, findings, approvals, holds, events… keep their ids and other fields',
  'signed or hashed records keep their text: policy revisions (governance and claude-policy, content and note: signed, immutable), ' +
    'the current document of a managed config (its revision\'s copy), collector ingest items (hashed into their `ingest.batch` ' +
    "ledger record), findings' natural key (a SHA-256 digest of rule, subject and artifact)",
  'server administration outside a tenant: connectors, console secrets and settings (superadmin only); the single sign-on link ' +
    "(issuer and the provider's subject id) of an erased user stays, so that provider account cannot sign in as someone new",
  'copies outside this database: deliveries already made to webhook receivers and connector sinks, the NATS stream (up to an hour), ' +
    'backups, and on Postgres the WAL and old row versions until `VACUUM (FULL)` (docs/compliance.md "The bytes are gone")',
  'records of modules that register no `erase` cascade',
];

export type Receipt = {
  erasure_id: string;
  case_ref: string;
  subject_kind: string;
  subject_ref: string;
  aliases: string[];
  approval_id: string;
  approvers: string[];
  executed_by: string;
  completed_at: string;
  erased: { where: string; count: number }[];
  not_erased: string[];
  ledger_seq: number;
  ledger_hash: string;
};

/**
 * Executes an erasure under dual control. Refused with 409 `legal_hold` while an active hold covers
 * the subject, an alias or a data class; without `approval_id` it opens an approval (status
 * `pending_approval`); with an approved one it runs the `erase` record hooks of the subject (each
 * module's cascade erases its own records) and seals a receipt (`completed`).
 */
export async function executeErasure(
  ctx: Ctx,
  id: string,
  input: { approval_id?: string; reason?: string },
): Promise<{ pending: Approval } | { erasure: Erasure }> {
  const tenant = tenantOf(ctx);
  const me = who(ctx);
  const store = ctx.services.store;
  const e = await getErasure(store, tenant, id);
  if (e.status === 'completed') throw errors.conflict('the erasure request is already completed');
  const held = await store.withTenant(tenant, (tx) =>
    coveringHolds(tx, tenant, { kind: e.subject_kind, refs: [e.subject_ref, ...e.aliases], dataClasses: e.data_classes }),
  );
  if (held.length > 0) {
    await step(ctx, 'erasure', id, 'refused_legal_hold', 'compliance.erasure.refuse', [me], null, { holds: held });
    throw new ApiError('legal_hold', `a legal hold covers this subject; the erasure cannot run (hold ${held.join(', ')})`);
  }
  const gate = await gateOnApproval(ctx, erasurePlan(e), input.approval_id, { reason: input.reason ?? `erasure ${e.case_ref}` });
  if ('pending' in gate) {
    const now = nowTimestamp();
    await store.withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      await tx
        .updateTable('cmp_erasures')
        .set({ status: 'pending_approval', approval_id: gate.pending.id, updated_at: now })
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .where('status', '!=', 'completed')
        .execute();
    });
    await step(ctx, 'erasure', id, 'execution_requested', 'compliance.erasure.execute_request', [me], gate.pending.id, {});
    return { pending: gate.pending };
  }
  const approval = gate.consumed;
  const people = await approvers(ctx, approval.id);
  const outcome = await runErasure(ctx, tenant, e, async (tx) => {
    await assertTenantWritable(tx, tenant);
    // The hold check again, inside the transaction that erases: a hold placed meanwhile still wins.
    const late = await coveringHolds(tx, tenant, {
      kind: e.subject_kind,
      refs: [e.subject_ref, ...e.aliases],
      dataClasses: e.data_classes,
    });
    if (late.length > 0)
      throw new ApiError('legal_hold', `a legal hold covers this subject; the ` + `erasure cannot run (hold ${late.join(', ')})`);
  });
  const erased = outcome.erased;
  const now = nowTimestamp();
  // The request keeps the subject id and the SHA-256 of each alias; the aliases themselves were personal data.
  const aliases = e.aliases.map(aliasDigest);
  const done = await ctx.services.events.withEvents((emit) =>
    store.withTenant(tenant, async (tx) => {
      const res = await tx
        .updateTable('cmp_erasures')
        .set({ status: 'completed', approval_id: approval.id, aliases: JSON.stringify(aliases), completed_at: now, updated_at: now })
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .where('status', '!=', 'completed')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw errors.conflict('the erasure request is already completed');
      // Read back: the text cascade may have redacted the subject's identifiers from the case ref.
      const row = await readErasure(tx, tenant, id);
      await emit(
        {
          type: 'erasure.completed',
          tenant,
          subject: `erasure_request/${id}`,
          data: { id, case_ref: row.case_ref, approval_id: approval.id },
        },
        tx,
      );
      return row;
    }),
  );
  const ev = await step(
    ctx,
    'erasure',
    id,
    'completed',
    'compliance.erasure.execute',
    [me, approval.requested_by, ...people],
    approval.id,
    { approvals: approval.approvals, quorum: approval.quorum, plan_hash: approval.plan_hash, erased },
  );
  const receipt: Receipt = {
    erasure_id: id,
    case_ref: done.case_ref,
    subject_kind: e.subject_kind,
    subject_ref: e.subject_ref,
    aliases,
    approval_id: approval.id,
    approvers: people,
    executed_by: me,
    completed_at: now,
    erased,
    not_erased: [...outcome.not_erased, ...NOT_ERASED],
    ledger_seq: ev.ledger_seq,
    ledger_hash: ev.ledger_hash,
  };
  await reclaimAfterErasure(store, receipt.not_erased, erasureOffload(ctx.services), { vacuum: true });
  await store.withTenant(tenant, (tx) =>
    tx
      .updateTable('cmp_erasures')
      .set({ receipt: JSON.stringify(receipt) })
      .where('tenant_id', '=', tenant)
      .where('id', '=', id)
      .execute(),
  );
  await reclaimAfterErasure(store, [], erasureOffload(ctx.services));
  return { erasure: toErasure(done) };
}

export async function erasureReceipt(store: Store, tenant: string, id: string): Promise<Receipt> {
  const r = await store.withTenant(tenant, (tx) => readErasure(tx, tenant, id));
  if (r.status !== 'completed' || r.receipt === null)
    throw errors.conflict(`the erasure request is ${r.status}; ` + `a receipt exists once it is completed`);
  return JSON.parse(r.receipt) as Receipt;
}
