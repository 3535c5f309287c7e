/**
 * `GET /v1/audit/export` (spec: Endpoints → Audit export; DECISIONS.md "Audit ledger → Export"):
 * the tenant's chain, one record per line in the chosen format, a terminator line, then an
 * `audit.export` record. Streamed from the export pool with backpressure (export-stream.ts).
 */
import Type from 'typebox';
import { ApiError, errors } from '../../contract/errors.js';
import { Text } from '../../contract/common.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { encoderFor, FormatTokenError, parseFormatToken } from '../../encoders/registry.js';
import type { RequestContext } from '../../http/context.js';
import { reply, type Reply } from '../../http/reply.js';
import { readHead } from '../../ledger/ledger-store.js';
import type { ExportFilter } from '../../workers/export-protocol.js';
import { AuditFilterFields } from '../audit/schemas.js';
import { exportChunks, type ExportOutcome, type ExportPlan } from './export-stream.js';

/** Response headers: the snapshot range, so a client can show progress and an ETA before the end. */
export const EXPORT_FROM_HEADER = 'x-export-from-seq';
export const EXPORT_TO_HEADER = 'x-export-to-seq';

/** Query of the export: format, seq range, and the list filters of `GET /v1/audit`. */
export const ExportQuery = Type.Object(
  {
    format: Type.Optional(Text({ description: 'cef (default), leef, syslog, otlp, otlp_envelope, otlp_log_record, ocsf' })),
    from: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'first seq (inclusive, default 1); resume with the previous last_seq + 1',
      }),
    ),
    to: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'last seq (inclusive, default: the head at the start of the export)',
      }),
    ),
    ...AuditFilterFields,
  },
  { additionalProperties: false },
);

type Query = {
  format?: string;
  from?: number;
  to?: number;
  action?: string;
  actor?: string;
  target_kind?: string;
  target_id?: string;
  since?: string;
  until?: string;
};

function filterOf(q: Query): ExportFilter {
  const f: ExportFilter = {};
  for (const k of ['action', 'actor', 'target_kind', 'target_id', 'since', 'until'] as const) if (q[k] !== undefined) f[k] = q[k];
  return f;
}

/** The handler: checks everything that can fail before the first byte, then streams. */
export async function exportAudit(ctx: RequestContext<unknown, Query>): Promise<Reply> {
  const exporter = ctx.services.auditExport;
  if (exporter === undefined) throw new ApiError('not_configured', 'the audit export is not configured on this server');
  const tenant = ctx.tenant;
  if (tenant === undefined) throw errors.badRequest('tenant required');
  let format: string;
  try {
    format = parseFormatToken('ledger_export', ctx.query.format);
  } catch (err) {
    // The registry's message names the accepted tokens (spec: Accepted tokens per surface, rule 3).
    if (err instanceof FormatTokenError) throw errors.badRequest(err.message);
    throw err;
  }
  const encoder = encoderFor('ledger_export', format);
  const fromSeq = ctx.query.from ?? 1;
  if (ctx.query.to !== undefined && ctx.query.to < fromSeq - 1) throw errors.badRequest(`to (${ctx.query.to}) is before from (${fromSeq})`);
  // Snapshot bound: the head now. Records appended during the export (its own audit record too) are not part of it.
  const head = await ctx.services.store.withTenant(tenant, (tx) => readHead(tx, tenant));
  const headSeq = head?.seq ?? 0;
  const plan: ExportPlan = {
    tenant,
    format,
    json: encoder.json,
    filter: filterOf(ctx.query),
    fromSeq,
    toSeq: Math.min(ctx.query.to ?? headSeq, headSeq),
  };
  const runner = exporter.runner();
  const onFinish = async (o: ExportOutcome): Promise<void> => {
    const record = (): Promise<unknown> =>
      ctx.audit(
        { kind: 'audit_chain', id: tenant },
        {
          format,
          from: plan.fromSeq,
          to: plan.toSeq,
          filter: plan.filter,
          complete: o.complete,
          count: o.count,
          last_seq: o.lastSeq,
          bytes: o.bytes,
        },
        { chain: tenant },
      );
    if (o.complete) {
      // Awaited before the terminator line: an export the ledger could not record never looks complete.
      await record();
      return;
    }
    // An interrupted export is recorded too (what left the building is what counts), best effort.
    if (o.error !== undefined) ctx.log.error({ err: o.error, tenant, format }, 'audit export failed');
    await record().catch((err: unknown) => ctx.log.error({ err, tenant }, 'could not record an interrupted audit export'));
  };
  const headers = { [EXPORT_FROM_HEADER]: String(plan.fromSeq), [EXPORT_TO_HEADER]: String(plan.toSeq), 'cache-control': 'no-store' };
  return reply.stream(exportChunks(plan, runner, onFinish), encoder.contentType, 200, headers);
}

/** The audit export route. */
export const auditExportRoutes: AnyRoute[] = [
  route({
    method: 'GET',
    path: '/v1/audit/export',
    stability: 'stable',
    operationId: 'exportAudit',
    summary: 'Stream the tenant audit chain in a SIEM format, ending with a terminator line',
    tags: ['audit'],
    permission: 'audit:read',
    audit: 'audit.export',
    query: ExportQuery,
    produces: 'text/plain; charset=utf-8',
    handler: exportAudit,
  }),
];
