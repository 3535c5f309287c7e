/**
 * `GET /v1/m/security/findings/export?format=sarif`: the findings under the list's filters as one
 * SARIF 2.1.0 log, streamed with flat memory (src/encoders/sarif.ts does the encoding).
 *
 * The headers (DECISIONS.md: `X-Service-Result-Count`, `X-Service-Truncated`) go out before the
 * first result, so a first pass reads only `(id, rule_id, severity)` in id order to learn the rules,
 * the number of results the cap lets through, the id the cut falls on, the refusals and the page
 * bounds. The second pass reads full rows up to that id and encodes them page by page. Both passes
 * run on the audit export's threads (sarif-worker.ts, their own read-only connections, below the
 * main thread's priority): the main thread orders the pages and writes their bytes with
 * back-pressure, so the server keeps answering during an export of any size. A finding triaged out of the
 * filters between the passes makes the body hold fewer results than the header said; the run's
 * invocation properties carry the exact figures of the body.
 */
import { fileURLToPath } from 'node:url';
import type { AuditExporter } from '../../core/audit-export/exporter.js';
import type { Store } from '../../store/store.js';
import { sarifHead, sarifTail, type SarifRule } from '../../encoders/sarif.js';
import type { FindingFilter } from './finding-store.js';
import { DETECTOR_RULE_TEXT } from './detectors.js';
import {
  countFindings,
  encodeFindingsPage,
  NAMED_REFUSALS,
  type CountRequest,
  type CountResult,
  type FindingsReader,
  type PageRequest,
  type PageResult,
} from './sarif-pages.js';
import type { SarifTask } from './sarif-worker.js';

/** The default cap on results of one export; `SERVICE_FINDINGS_EXPORT_CAP` changes it. */
export const DEFAULT_EXPORT_CAP = 25_000;
/** Findings per body page (one task on an export thread). */
export const PAGE = 500;

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
  /** findings per body page (default PAGE) */
  pageSize?: number;
}

/** What the first pass learned, with the rules' help text. */
export interface ExportCount extends Omit<CountResult, 'rules'> {
  rules: SarifRule[];
}

/** Where the two passes run: the export threads, or this thread on the server's store. */
export interface SarifRunner {
  count(req: CountRequest): Promise<CountResult>;
  page(req: PageRequest): Promise<PageResult>;
  /** pages encoding at once (bounds memory: each is ≤ ~1 MB) */
  readonly window: number;
}

// The compiled worker module sits beside this file in dist/src/modules/security/.
const SARIF_WORKER = fileURLToPath(new URL('./sarif-worker.js', import.meta.url));

/**
 * The export threads of the audit export (exporter.ts) when the server has them: the main thread
 * only orders pages and writes bytes. Without them (an embedding with no export pool) the same
 * passes run here on the server's store.
 */
export function sarifRunner(services: { store: Store; auditExport?: AuditExporter }): SarifRunner {
  const exporter = services.auditExport;
  if (exporter === undefined) {
    const reader: FindingsReader = { read: (tenant, fn) => services.store.withTenant(tenant, fn) };
    return { count: (req) => countFindings(reader, req), page: (req) => encodeFindingsPage(reader, req), window: 1 };
  }
  const source = exporter.source;
  return {
    count: (req) => exporter.runTask<SarifTask, CountResult>(SARIF_WORKER, { kind: 'sarif-count', source, ...req }),
    page: (req) => exporter.runTask<SarifTask, PageResult>(SARIF_WORKER, { kind: 'sarif-page', source, ...req }),
    // Two pages per thread: one encoding, one waiting behind it while the head page is written.
    window: 4,
  };
}

/** The first pass (on the runner): rules with their help text, result count, cut, refusals, page bounds. */
export async function countExport(runner: SarifRunner, plan: ExportPlan): Promise<ExportCount> {
  const c = await runner.count({ tenant: plan.tenant, filter: plan.filter, cap: plan.cap, pageSize: plan.pageSize ?? PAGE });
  return { ...c, rules: c.rules.map(([id, severity]) => ({ id, severity, ...(DETECTOR_RULE_TEXT[id] ?? {}) })) };
}

/** The outcome of the body pass, for the audit record. */
export interface ExportOutcome {
  emitted: number;
  refused: number;
  bytes: number;
}

/**
 * The second pass: the SARIF log as chunks. Pages are encoded on the runner `window` at a time, in
 * order, and each is pulled only when the consumer (the HTTP stream, with back-pressure) asks for
 * the next chunk, so memory stays at a few pages whatever the export's size.
 */
export async function* sarifChunks(
  runner: SarifRunner,
  plan: ExportPlan,
  count: ExportCount,
  properties: Record<string, unknown>,
  done: (o: ExportOutcome) => Promise<void>,
): AsyncGenerator<Uint8Array | string> {
  const head = sarifHead({
    toolName: 'svc',
    toolVersion: plan.toolVersion,
    informationUri: 'https://github.com/svc/svc/blob/main/docs/findings.md',
    rules: count.rules,
    properties,
  });
  let bytes = Buffer.byteLength(head);
  yield head;
  let emitted = 0;
  const refusals: Array<{ id: string; reason: string }> = [];
  let refused = 0;
  const pending: Array<Promise<PageResult>> = [];
  let next = 0;
  const request = (i: number): Promise<PageResult> => {
    const p = runner.page({
      tenant: plan.tenant,
      filter: plan.filter,
      after: i === 0 ? undefined : count.bounds[i - 1],
      upTo: count.bounds[i] as string,
    });
    // A page the consumer never reaches (the client went away) must not be an unhandled rejection.
    p.catch(() => undefined);
    return p;
  };
  while (emitted < count.emit && (next < count.bounds.length || pending.length > 0)) {
    while (pending.length < runner.window && next < count.bounds.length) pending.push(request(next++));
    const page = await (pending.shift() as Promise<PageResult>);
    // A finding triaged into the filters between the passes could push the body past the count: cut at it.
    const room = count.emit - emitted;
    const take = Math.min(room, page.ends.length);
    for (const r of page.refusals) {
      if (r.before > take) continue;
      refused++;
      if (refusals.length < NAMED_REFUSALS) refusals.push({ id: r.id, reason: r.reason });
    }
    if (take === 0) continue;
    const end = page.ends[take - 1] as number;
    const body = new Uint8Array(page.bytes, 0, end);
    if (emitted > 0) {
      bytes += 1;
      yield ',';
    }
    bytes += end;
    emitted += take;
    yield body;
  }
  const tail = sarifTail({ refused: refusals, refusedTotal: refused, truncated: count.truncated, emitted });
  bytes += Buffer.byteLength(tail);
  // Recorded before the last bytes go out: an export the ledger could not record never looks complete.
  await done({ emitted, refused, bytes });
  yield tail;
}
