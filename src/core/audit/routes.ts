/**
 * Audit ledger routes (spec: Endpoints → audit; DECISIONS.md "Audit ledger"): read a tenant's chain
 * or the system chain in seq pages (each read appends `audit.read` to the chain it read), verify the
 * tenant's chain (not audited), list the signing keys, and an on-demand checkpoint (superadmin).
 */
import Type from 'typebox';
import { ApiError, errors } from '../../contract/errors.js';
import { Limit } from '../../contract/common.js';
import { route, type AnyRoute } from '../../contract/route.js';
import type { RequestContext } from '../../http/context.js';
import type { LedgerService } from '../../ledger/ledger-service.js';
import type { RecordFilter } from '../../ledger/record-filter.js';
import { ChainHeadError } from '../../ledger/chain-head.js';
import { SYSTEM_TENANT } from '../../ledger/record.js';
import { AuditFilterFields, AuditPageSchema, CheckpointResultSchema, PubkeysSchema, VerifyReportSchema } from './schemas.js';

const ReadQuery = Type.Object(
  {
    from: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'first seq (inclusive, default 1)' })),
    cursor: Type.Optional(
      Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'the previous page’s cursor (a seq); overrides from' }),
    ),
    limit: Type.Optional(Limit),
    ...AuditFilterFields,
  },
  { additionalProperties: false },
);

type ReadQueryT = {
  from?: number;
  cursor?: string;
  limit?: number;
  action?: string;
  actor?: string;
  target_kind?: string;
  target_id?: string;
  since?: string;
  until?: string;
};

const VerifyQuery = Type.Object(
  { from: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'first seq to verify (default 1)' })) },
  { additionalProperties: false },
);

/** The ledger of the running server, or 501 when this server has none. */
export function ledgerOf(ctx: RequestContext<unknown, unknown, unknown>): LedgerService {
  const l = ctx.services.ledger;
  if (l === undefined) throw new ApiError('not_configured', 'the audit ledger is not configured on this server');
  return l;
}

function tenantOf(ctx: RequestContext<unknown, unknown, unknown>): string {
  if (ctx.tenant === undefined) throw errors.badRequest('tenant required');
  return ctx.tenant;
}

async function readChain(ctx: RequestContext<Record<string, string>, ReadQueryT>, tenant: string) {
  const q = ctx.query;
  const from = q.cursor !== undefined ? Number(q.cursor) : (q.from ?? 1);
  const limit = q.limit ?? 50;
  const filter: RecordFilter = {};
  for (const k of ['action', 'actor', 'target_kind', 'target_id', 'since', 'until'] as const) if (q[k] !== undefined) filter[k] = q[k];
  const ledger = ledgerOf(ctx);
  const page = await ledger.read(tenant, from, limit, filter);
  // DECISIONS.md: each read appends `audit.read` to the chain that was read; answered only once durable.
  const target = { kind: 'audit_chain', id: tenant };
  const meta = { from, limit, filter: { ...filter }, count: page.items.length };
  try {
    await ctx.audit(target, meta, { chain: tenant });
  } catch (err) {
    if (!(err instanceof ChainHeadError)) throw err;
    // A damaged chain takes no records, but reading it is how the damage is found (svc audit verify
    // names the bad seq from these pages): the read is answered, marked, and recorded on the system chain.
    page.damaged = err.message;
    try {
      if (tenant === SYSTEM_TENANT) throw err;
      await ctx.audit(target, { ...meta, chain_damaged: err.detail }, { chain: SYSTEM_TENANT });
    } catch (unrecorded) {
      if (!(unrecorded instanceof ChainHeadError)) throw unrecorded;
      // The system chain is damaged too: no chain is left to take the record. Answered anyway, said loudly in the log.
      ctx.log.error({ err: unrecorded, chain: tenant }, 'audit.read of a damaged chain could not be recorded: the system chain is damaged');
    }
  }
  return page;
}

const common = { stability: 'stable' as const, tags: ['audit'] };

/** The audit routes. */
export const auditRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/audit',
    operationId: 'listAudit',
    summary: 'Read the tenant audit chain in ascending seq order; the read itself is recorded (audit.read)',
    permission: 'audit:read',
    audit: 'audit.read',
    query: ReadQuery,
    response: AuditPageSchema,
    handler: (ctx) => readChain(ctx as never, tenantOf(ctx as never)),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/audit/system',
    operationId: 'listSystemAudit',
    summary: 'Read the system audit chain (users, logins, tokens, memberships); superadmin only',
    permission: 'system:admin',
    audit: 'audit.read',
    query: ReadQuery,
    response: AuditPageSchema,
    handler: (ctx) => readChain(ctx as never, SYSTEM_TENANT),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/audit/verify',
    operationId: 'verifyAudit',
    summary: 'Verify the tenant audit chain: links, hashes, head, checkpoints and every signature',
    permission: 'audit:read',
    query: VerifyQuery,
    response: VerifyReportSchema,
    timeoutMs: 600_000,
    handler: (ctx) => ledgerOf(ctx as never).verify(tenantOf(ctx as never), ctx.query.from ?? 1),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/audit/pubkey',
    operationId: 'auditPubkeys',
    summary: 'Signing keys of the tenant chain, retired ones with their seq range',
    permission: 'audit:read',
    response: PubkeysSchema,
    handler: (ctx) => ledgerOf(ctx as never).publishedKeys(tenantOf(ctx as never)),
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/audit/checkpoint',
    operationId: 'checkpointAudit',
    summary: 'Write a checkpoint now in every chain (svc audit checkpoint); superadmin only',
    permission: 'system:admin',
    unaudited: 'a checkpoint is itself written into each chain it attests',
    response: Type.Object({ checkpoints: Type.Array(CheckpointResultSchema) }, { additionalProperties: false }),
    handler: async (ctx) => ({ checkpoints: await ledgerOf(ctx as never).checkpointAll() }),
  }),
];
