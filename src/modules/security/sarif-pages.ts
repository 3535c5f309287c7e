/**
 * The two CPU-bound passes of the SARIF export, written against a `FindingsReader` so the same code
 * runs on an export thread (sarif-worker.ts, its own read-only connection) and, when the server has
 * no export pool, in-process on the server's store:
 *
 * - `countFindings`: reads `(id, rule_id, severity)` in id order and learns the rules, the number of
 *   results the cap lets through, the id the cut falls on, the refusals, and the page bounds (every
 *   `pageSize`-th id up to the cut), so the body's pages can be read and encoded in parallel.
 * - `encodeFindingsPage`: reads the full rows of one page `(after, upTo]`, encodes each result
 *   with the pure encoder and returns the page as UTF-8 bytes (results joined by `,`) with the end
 *   offset of each result, so the main thread can cut at the cap without parsing anything.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import { refusalOf, sarifResult } from '../../encoders/sarif.js';
import { filtered, sarifFindingOf, type FindingFilter } from './finding-store.js';

/** Runs one read of a tenant's findings (a tenant-bound transaction on Postgres: RLS confines it). */
export interface FindingsReader {
  read<T>(tenant: string, fn: (db: Kysely<Database>) => Promise<T>): Promise<T>;
}

const COUNT_PAGE = 5_000;
/** Refusals named one by one in the run's notifications; the rest are counted. */
export const NAMED_REFUSALS = 100;

export interface CountRequest {
  tenant: string;
  filter: FindingFilter;
  cap: number;
  /** findings per body page */
  pageSize: number;
}

/** What the first pass learned. */
export interface CountResult {
  /** rule id → highest severity among its emitted findings, in rule id order */
  rules: Array<[string, string]>;
  /** results the body will carry */
  emit: number;
  truncated: boolean;
  /** refused findings among those before the cut */
  refused: number;
  /** id of the last finding the export reads (undefined: none) */
  lastId: string | undefined;
  /** upper bound (inclusive) of each body page, ascending; the last is `lastId` */
  bounds: string[];
}

const RANK: Record<string, number> = { undetermined: 0, info: 1, low: 2, medium: 3, high: 4, critical: 5 };

/** The first pass: rules, result count, cut, refusals and page bounds, reading three columns. */
export async function countFindings(reader: FindingsReader, req: CountRequest): Promise<CountResult> {
  const rules = new Map<string, string>();
  let emit = 0;
  let refused = 0;
  let lastId: string | undefined;
  let after: string | undefined;
  let inPage = 0;
  const bounds: string[] = [];
  const done = (truncated: boolean): CountResult => {
    if (lastId !== undefined && bounds[bounds.length - 1] !== lastId) bounds.push(lastId);
    const list = [...rules.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return { rules: list, emit, truncated, refused, lastId, bounds };
  };
  for (;;) {
    const rows = await reader.read(req.tenant, (db) => {
      let q = db.selectFrom('security_findings').select(['id', 'rule_id', 'severity']).where('tenant_id', '=', req.tenant);
      if (after) q = q.where('id', '>', after);
      return filtered(q, req.filter).orderBy('id').limit(COUNT_PAGE).execute();
    });
    for (const r of rows) {
      const bad = refusalOf(r) !== undefined;
      if (emit === req.cap) {
        // One more valid finding past the cap: the export is truncated.
        if (!bad) return done(true);
        continue;
      }
      lastId = r.id;
      if (++inPage === req.pageSize) {
        bounds.push(r.id);
        inPage = 0;
      }
      if (bad) {
        refused++;
        continue;
      }
      emit++;
      const seen = rules.get(r.rule_id);
      if (seen === undefined || (RANK[r.severity] ?? 0) > (RANK[seen] ?? 0)) rules.set(r.rule_id, r.severity);
    }
    const last = rows[rows.length - 1];
    if (rows.length < COUNT_PAGE || !last) return done(false);
    after = last.id;
  }
}

export interface PageRequest {
  tenant: string;
  filter: FindingFilter;
  /** exclusive lower bound (undefined: from the first) */
  after: string | undefined;
  /** inclusive upper bound */
  upTo: string;
}

/** One encoded page. */
export interface PageResult {
  /** the page's results as UTF-8 JSON joined by `,` (its first `length` bytes) */
  bytes: ArrayBuffer;
  length: number;
  /** end offset of each result in `bytes` (the separator follows it) */
  ends: number[];
  /** refused findings of the page, each with the number of results before it in the page */
  refusals: Array<{ id: string; reason: string; before: number }>;
}

/** Reads and encodes one page of results. */
export async function encodeFindingsPage(reader: FindingsReader, req: PageRequest): Promise<PageResult> {
  const rows = await reader.read(req.tenant, (db) => {
    let q = db.selectFrom('security_findings').selectAll().where('tenant_id', '=', req.tenant).where('id', '<=', req.upTo);
    if (req.after !== undefined) q = q.where('id', '>', req.after);
    return filtered(q, req.filter).orderBy('id').execute();
  });
  const parts: string[] = [];
  const ends: number[] = [];
  const refusals: PageResult['refusals'] = [];
  let offset = 0;
  for (const r of rows) {
    const out = sarifResult(sarifFindingOf(r));
    if ('refused' in out) {
      refusals.push({ id: r.id, reason: out.refused, before: parts.length });
      continue;
    }
    if (parts.length > 0) offset += 1;
    offset += Buffer.byteLength(out.json);
    parts.push(out.json);
    ends.push(offset);
  }
  // allocUnsafeSlow: an ArrayBuffer of its own (never a slice of the shared pool slab), so it can be transferred.
  const buf = Buffer.allocUnsafeSlow(Math.max(1, offset));
  const written = parts.length === 0 ? 0 : buf.write(parts.join(','), 0, 'utf8');
  return { bytes: buf.buffer as ArrayBuffer, length: written, ends, refusals };
}
