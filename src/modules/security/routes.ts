/**
 * Module routes `/v1/m/security/findings*` (beta). Findings reads need `security:finding:read`,
 * which viewers hold: a finding is the triaged summary of a problem (rule, subject, message). The
 * evidence of svc's own detectors is access-graph data (drift items, attack paths), a privileged
 * read like the graph itself (DECISIONS.md), so it has its own route: editor and above, audited.
 * Writes (integration reports, triage, an evaluation on demand) need `security:finding:write`
 * (editor and above) and append their ledger record.
 */
import { route, type AnyRoute } from '../../contract/route.js';
import { errors } from '../../contract/errors.js';
import { tenantOf } from '../../http/request-scope.js';
import type { RequestContext } from '../../http/context.js';
import { reply } from '../../http/reply.js';
import { SARIF_CONTENT_TYPE } from '../../encoders/sarif.js';
import { getFindingRow, listFindings, toFinding, triageFinding, upsertReports, type FindingFilter } from './finding-store.js';
import { findingEvents } from './events.js';
import { catchUpCollector, evaluateTenant } from './runner.js';
import { countExport, exportCapFromEnv, sarifChunks, sarifRunner, type ExportPlan } from './sarif-export.js';
import { naturalKey } from './model.js';
import {
  EvaluateAnswer,
  EvidenceAnswer,
  ExportQuery,
  Finding,
  FindingPage,
  IdParams,
  ListQuery,
  ReportAnswer,
  ReportBody,
  TriageBody,
} from './schemas.js';

/** DECISIONS.md "SARIF export headers". */
export const TRUNCATED_HEADER = 'x-service-truncated';
export const RESULT_COUNT_HEADER = 'x-service-result-count';
/** Findings the export refused (empty rule id, severity with no SARIF level); also in the run's notifications. */
export const REFUSED_COUNT_HEADER = 'x-service-refused-count';

const common = { stability: 'beta' as const, tags: ['security'] };

type Ctx = Pick<RequestContext, 'principal' | 'tenant' | 'services' | 'requestId' | 'log' | 'audit' | 'headers'>;

function filterOf(q: Record<string, unknown>): FindingFilter {
  const f: Record<string, unknown> = {};
  for (const k of ['status', 'severity', 'source', 'kind', 'rule_id', 'subject_kind', 'subject_ref'] as const)
    if (q[k] !== undefined) f[k] = q[k];
  return f as FindingFilter;
}

const actor = (ctx: Ctx): string => ctx.principal?.actor ?? 'system';

async function exportFindings(ctx: Ctx & { query: Record<string, unknown> }) {
  const tenant = tenantOf(ctx);
  const format = (ctx.query['format'] as string | undefined) ?? 'sarif';
  if (format !== 'sarif') throw errors.badRequest(`unknown format ${JSON.stringify(format.slice(0, 32))}; accepted: sarif`);
  await catchUpCollector(ctx.services, tenant, ctx.log);
  const serverCap = exportCapFromEnv();
  const asked = ctx.query['max_results'] as number | undefined;
  const cap = asked === undefined ? serverCap : Math.min(asked, serverCap);
  const plan: ExportPlan = { tenant, filter: filterOf(ctx.query), cap, toolVersion: ctx.services.build.version };
  const runner = sarifRunner(ctx.services);
  const count = await countExport(runner, plan);
  const headers: Record<string, string> = {
    [RESULT_COUNT_HEADER]: String(count.emit),
    [REFUSED_COUNT_HEADER]: String(count.refused),
    'cache-control': 'no-store',
    'content-disposition': 'attachment; filename="findings.sarif"',
  };
  if (count.truncated) headers[TRUNCATED_HEADER] = 'true';
  const properties = { 'svc.tenant': tenant, 'svc.filters': plan.filter, 'svc.cap': cap, 'svc.commit': ctx.services.build.commit };
  const chunks = sarifChunks(runner, plan, count, properties, async (o) => {
    await ctx.audit(
      { kind: 'security_findings', id: '' },
      { format, filter: plan.filter, cap, emitted: o.emitted, refused: o.refused, truncated: count.truncated, bytes: o.bytes },
    );
  });
  return reply.stream(chunks, SARIF_CONTENT_TYPE, 200, headers);
}

export const securityRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/security/findings',
    operationId: 'securityListFindings',
    summary: 'Findings under filters (keyset pages in creation order)',
    permission: 'security:finding:read',
    query: ListQuery,
    response: FindingPage,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      await catchUpCollector(ctx.services, tenant, ctx.log);
      return listFindings(ctx.services.store, tenant, {
        ...filterOf(ctx.query),
        ...(ctx.query.cursor ? { cursor: ctx.query.cursor } : {}),
        limit: ctx.query.limit ?? 50,
      });
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/m/security/findings',
    operationId: 'securityReportFindings',
    summary:
      'Report findings from an integration (the REST write path beside collector ingest); deduplicated by rule, subject, artifact and ' +
      'region',
    permission: 'security:finding:write',
    audit: 'security.findings.report',
    body: ReportBody,
    response: ReportAnswer,
    bodyLimit: 4 * 1024 * 1024,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      for (const r of ctx.body.findings)
        if (r.region?.end_line !== undefined && r.region.end_line < r.region.start_line)
          throw errors.badRequest('region.end_line is ' + 'before region.start_line');
      const out = await ctx.services.events.withEvents((emit) =>
        upsertReports(ctx.services.store, tenant, 'integration', ctx.body.findings, actor(ctx), (tx, o) =>
          emit(findingEvents(tenant, o.reported), tx),
        ),
      );
      await ctx.audit(
        { kind: 'security_findings', id: '' },
        { accepted: ctx.body.findings.length, reported: out.reported.length, repeated: out.repeated },
      );
      // Ids in request order: a report's finding is the one with its natural key.
      return {
        accepted: ctx.body.findings.length,
        reported: out.reported.length,
        repeated: out.repeated,
        ids: ctx.body.findings.map((r) => out.ids.get(naturalKey(r)) ?? ''),
      };
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/security/findings/export',
    operationId: 'securityExportFindings',
    summary:
      'The findings under the list filters as SARIF 2.1.0 (application/sarif+json), streamed; capped, with X-Service-Result-Count and ' +
      'X-Service-Truncated',
    permission: 'security:finding:read',
    audit: 'security.findings.export',
    query: ExportQuery,
    produces: SARIF_CONTENT_TYPE,
    timeoutMs: 600_000,
    handler: (ctx) => exportFindings(ctx),
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/m/security/findings/evaluate',
    operationId: 'securityEvaluateFindings',
    summary:
      "Run svc's detectors (access-map drift and attack paths) and fold collector findings now; detector findings no longer seen are " +
      'resolved',
    permission: 'security:finding:write',
    audit: 'security.findings.evaluate',
    response: EvaluateAnswer,
    timeoutMs: 120_000,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const out = await evaluateTenant(
        ctx.services,
        tenant,
        { audit: (meta) => ctx.audit({ kind: 'security_findings', id: '' }, meta) },
        ctx.log,
      );
      return out;
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/security/findings/{id}',
    operationId: 'securityGetFinding',
    summary: 'One finding',
    permission: 'security:finding:read',
    params: IdParams,
    response: Finding,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      await catchUpCollector(ctx.services, tenant, ctx.log);
      return toFinding(await getFindingRow(ctx.services.store, tenant, ctx.params.id));
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/security/findings/{id}/evidence',
    operationId: 'securityFindingEvidence',
    summary:
      "A finding's evidence (a detector's drift item or attack path): access-graph data, so a privileged read (editor and above, " +
      'audited)',
    permission: 'security:evidence:read',
    privileged: true,
    audit: 'security.finding.evidence.read',
    params: IdParams,
    response: EvidenceAnswer,
    handler: async (ctx) => {
      const row = await getFindingRow(ctx.services.store, tenantOf(ctx), ctx.params.id);
      return { id: row.id, rule_id: row.rule_id, evidence: JSON.parse(row.evidence) as Record<string, unknown> };
    },
  }),
  route({
    ...common,
    method: 'PATCH',
    path: '/v1/m/security/findings/{id}',
    operationId: 'securityTriageFinding',
    summary:
      'Triage: set status (open, acknowledged, resolved, suppressed) ' + 'with a note; audited; `version` when given must be current (409)',
    permission: 'security:finding:write',
    audit: 'security.finding.triage',
    params: IdParams,
    body: TriageBody,
    response: Finding,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const { finding, previous } = await ctx.services.events.withEvents((emit) =>
        triageFinding(ctx.services.store, tenant, ctx.params.id, ctx.body, actor(ctx), (tx, o) => emit(findingEvents(tenant, [], [o]), tx)),
      );
      await ctx.audit(
        { kind: 'finding', id: finding.id },
        { status: finding.status, previous_status: previous, note: finding.status_note, version: finding.version },
      );
      return finding;
    },
  }),
];
