/**
 * `GET /v1/m/security/findings/export?format=sarif`: the findings under the list's filters as one
 * SARIF 2.1.0 log, streamed with flat memory (src/encoders/sarif.ts does the encoding).
 *
 * The headers (DECISIONS.md: `X-Service-Result-Count`, `X-Service-Truncated`) go out before the
 * first result, so a first pass reads only `(id, rule_id, severity)` in id order to learn the rules,
 * the number of results the cap lets through, the id the cut falls on, and the refusals. The second
 * pass reads full rows up to that id and encodes them page by page. A finding triaged out of the
 * filters between the passes makes the body hold fewer results than the header said; the run's
 * invocation properties carry the exact figures of the body.
 */
import { sql } from 'kysely';
import type { Store } from '../../store/store.js';
import { refusalOf, sarifHead, sarifResult, sarifSeparator, sarifTail, type SarifFinding, type SarifRule } from '../../encoders/sarif.js';
import { filtered, toFinding, type FindingFilter, type FindingRow } from './finding-store.js';
import { DETECTOR_RULE_TEXT } from './detectors.js';

/** The default cap on results of one export; `SERVICE_FINDINGS_EXPORT_CAP` changes it. */
export const DEFAULT_EXPORT_CAP = 25_000;
const PREPASS_PAGE = 5_000;
const PAGE = 1_000;
/** Refusals named one by one in the run's notifications; the rest are counted. */
const NAMED_REFUSALS = 100;
/** Bytes gathered before a chunk is handed to the socket. */
const CHUNK = 64 * 1024;

const RANK: Record<string, number> = { undetermined: 0, info: 1, low: 2, medium: 3, high: 4, critical: 5 };

/** The export cap from the environment (a positive integer), else the default. */
export function exportCapFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SERVICE_FINDINGS_EXPORT_CAP'];
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isSafeInteger(n) && n >= 1 ? n : DEFAULT_EXPORT_CAP;
}

export interface ExportPlan {
  tenant: string;
  filter: FindingFilter;
  cap: number;
  toolVersion: string;
}

/** What the first pass learned. */
export interface ExportCount {
  rules: SarifRule[];
  /** results the body will carry */
  emit: number;
  truncated: boolean;
  /** refused findings among those before the cut */
  refused: number;
  /** id of the last finding the export reads (undefined: none) */
  lastId: string | undefined;
}

/** The first pass: rules, result count, cut and refusals, reading three columns. */
export async function countExport(store: Store, plan: ExportPlan): Promise<ExportCount> {
  const rules = new Map<string, string>();
  let emit = 0;
  let refused = 0;
  let lastId: string | undefined;
  let after: string | undefined;
  for (;;) {
    const rows = await store.withTenant(plan.tenant, (tx) => {
      let q = tx.selectFrom('security_findings').select(['id', 'rule_id', 'severity']).where('tenant_id', '=', plan.tenant);
      if (after) q = q.where('id', '>', after);
      return filtered(q, plan.filter).orderBy('id').limit(PREPASS_PAGE).execute();
    });
    for (const r of rows) {
      const bad = refusalOf(r) !== undefined;
      if (emit === plan.cap) {
        // One more valid finding past the cap: the export is truncated.
        if (!bad) return { rules: ruleList(rules), emit, truncated: true, refused, lastId };
        continue;
      }
      if (bad) {
        refused++;
        lastId = r.id;
        continue;
      }
      emit++;
      lastId = r.id;
      const seen = rules.get(r.rule_id);
      if (seen === undefined || (RANK[r.severity] ?? 0) > (RANK[seen] ?? 0)) rules.set(r.rule_id, r.severity);
    }
    const last = rows[rows.length - 1];
    if (rows.length < PREPASS_PAGE || !last) return { rules: ruleList(rules), emit, truncated: false, refused, lastId };
    after = last.id;
  }
}

function ruleList(rules: Map<string, string>): SarifRule[] {
  return [...rules.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, severity]) => ({ id, severity, ...(DETECTOR_RULE_TEXT[id] ?? {}) }));
}

/** The finding fields the encoder reads, from a stored row. */
export function sarifFindingOf(r: FindingRow): SarifFinding {
  const f = toFinding(r);
  return { ...f, natural_key: r.natural_key, region_start_line: f.region?.start_line ?? null, region_end_line: f.region?.end_line ?? null };
}

/** The outcome of the body pass, for the audit record. */
export interface ExportOutcome {
  emitted: number;
  refused: number;
  bytes: number;
}

/** The second pass: the SARIF log as text chunks. */
export async function* sarifChunks(store: Store, plan: ExportPlan, count: ExportCount, properties: Record<string, unknown>, done: (o: ExportOutcome) => Promise<void>): AsyncGenerator<string> {
  let buf = sarifHead({ toolName: 'svc', toolVersion: plan.toolVersion, informationUri: 'https://github.com/svc/svc/blob/main/docs/findings.md', rules: count.rules, properties });
  let bytes = 0;
  let emitted = 0;
  const refusals: Array<{ id: string; reason: string }> = [];
  let refused = 0;
  let after: string | undefined;
  const last = count.lastId;
  while (last !== undefined && emitted < count.emit) {
    const rows = await store.withTenant(plan.tenant, (tx) => {
      let q = tx.selectFrom('security_findings').selectAll().where('tenant_id', '=', plan.tenant).where('id', '<=', last);
      if (after) q = q.where('id', '>', after);
      return filtered(q, plan.filter).orderBy(sql`id`).limit(PAGE).execute();
    });
    for (const r of rows) {
      const out = sarifResult(sarifFindingOf(r));
      if ('refused' in out) {
        refused++;
        if (refusals.length < NAMED_REFUSALS) refusals.push({ id: r.id, reason: out.refused });
        continue;
      }
      if (emitted === count.emit) break;
      buf += sarifSeparator(emitted) + out.json;
      emitted++;
      if (buf.length >= CHUNK) {
        bytes += Buffer.byteLength(buf);
        yield buf;
        buf = '';
      }
    }
    const tail = rows[rows.length - 1];
    if (rows.length < PAGE || !tail) break;
    after = tail.id;
  }
  buf += sarifTail({ refused: refusals, refusedTotal: refused, truncated: count.truncated, emitted });
  bytes += Buffer.byteLength(buf);
  // Recorded before the last bytes go out: an export the ledger could not record never looks complete.
  await done({ emitted, refused, bytes });
  yield buf;
}
