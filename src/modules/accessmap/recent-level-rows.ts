/**
 * Rows of the recent level: what one observation, grant or forget looks like, and the checks a row passes when appended (merges do not
 * re-check).
 */
import { CONFIDENCES, MODES, ORIGIN_KINDS } from './model.js';

/**
 * When ingest starts a merge on the worker: once this many rows wait (`SERVICE_ACCESSMAP_MERGE_ROWS`,
 * default 250,000); from twice as many, ingest waits for the running merge (edge-store.ts). A merge
 * writes about every index page it touches once, so bigger merges write fewer pages per edge, but
 * a read that comes while one runs waits for it, and the last merge of a burst is not overlapped
 * by anything (docs/accessmap.md "The recent level", "Merges on a worker thread").
 */
export const DEFAULT_MERGE_ROWS = 250_000;

/** The merge threshold from `SERVICE_ACCESSMAP_MERGE_ROWS`; throws on a value that is not an integer in 1,000..10,000,000. */
export function mergeRowsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SERVICE_ACCESSMAP_MERGE_ROWS'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_MERGE_ROWS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1_000 || n > 10_000_000)
    throw new RangeError(`SERVICE_ACCESSMAP_MERGE_ROWS must be an integer from 1000 to 10000000, got ${JSON.stringify(raw)}`);
  return n;
}

let mergeRows: number | undefined;

/** How an observation meets an existing edge (`excluded` = the incoming row); one text for every write path. */
const rankOf = (col: string): string => `case ${col} when 'high' then 3 when 'medium' then 2 when 'low' then 1 else 0 end`;
export const OBSERVE_SET = {
  observed_count: 'access_edges.observed_count + excluded.observed_count',
  first_seen:
    'case when access_edges.first_seen is null or excluded.first_seen < access_edges.first_seen then excluded.first_seen else ' +
    'access_edges.first_seen end',
  last_seen:
    'case when access_edges.last_seen is null or excluded.last_seen >= access_edges.last_seen then excluded.last_seen else ' +
    'access_edges.last_seen end',
  signal_source:
    'case when access_edges.last_seen is null or excluded.last_seen >= access_edges.last_seen then excluded.signal_source else ' +
    'access_edges.signal_source end',
  confidence:
    `case when ${rankOf('excluded.confidence')} > ${rankOf('access_edges.confidence')} then excluded.confidence else ` +
    `access_edges.confidence end`,
  updated_at: 'excluded.updated_at',
} as const;

/**
 * What every row of the recent level names: the edge it makes (id), its tenant, its two ends by id and number, the mode, when it was
 * committed.
 */
interface LevelRow {
  id: string;
  tenant_id: string;
  origin_kind: string;
  origin_id: string;
  origin_no: number;
  resource_id: string;
  resource_no: number;
  mode: string;
  recorded_at: string;
}

/** One folded observation of a batch, as the recent level keeps it. */
export interface RecentRow extends LevelRow {
  observed_count: number;
  first_seen: string;
  last_seen: string;
  confidence: string;
  signal_source: string;
}

/** One grant of a batch (one row per access), as the recent level keeps it until a fold applies it. */
export interface GrantRow extends LevelRow {
  source: string;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/**
 * A stored timestamp: the CHECK's GLOB digit for digit (sqlite-checks.ts); whether the date exists is the caller's question (edge-store.ts
 * asks Date.parse).
 */
export const TIMESTAMP_RE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z$/;
const isOneOf = (list: readonly string[], v: unknown): boolean => typeof v === 'string' && list.includes(v);

/** The fields an observation's row and a grant's share, held to access_edges' CHECKs; `what` names the row in the error. */
type Refuse = (what: string) => never;
function refuser(r: object, what: string): Refuse {
  return (field) => {
    throw new Error(
      `accessmap recent level: refusing ${what} that access_edges' CHECKs would refuse (${field}: ` +
        `${JSON.stringify((r as Record<string, unknown>)[field])})`,
    );
  };
}
function assertEnds(r: LevelRow, bad: Refuse): void {
  if (typeof r.id !== 'string' || !UUID_RE.test(r.id)) bad('id');
  if (typeof r.tenant_id !== 'string' || !UUID_RE.test(r.tenant_id)) bad('tenant_id');
  if (!isOneOf(ORIGIN_KINDS, r.origin_kind)) bad('origin_kind');
  if (typeof r.origin_id !== 'string' || !UUID_RE.test(r.origin_id)) bad('origin_id');
  if (typeof r.resource_id !== 'string' || !UUID_RE.test(r.resource_id)) bad('resource_id');
  if (!Number.isSafeInteger(r.origin_no)) bad('origin_no');
  if (!Number.isSafeInteger(r.resource_no)) bad('resource_no');
  if (!isOneOf(MODES, r.mode)) bad('mode');
  if (typeof r.recorded_at !== 'string' || !TIMESTAMP_RE.test(r.recorded_at)) bad('recorded_at');
}

/**
 * Throws unless `r` would pass every CHECK of `access_edges` (SQLite migration 5) once merged:
 * canonical lowercase UUIDs, 9-digit UTC timestamps, the kinds, modes and confidences the table
 * allows, a positive count, and node numbers. The merge skips those CHECKs, so this is where they
 * hold. Callers validate their input first (edge-store.ts `assertStorable`, 400 to a client); a row
 * refused here is a bug, and nothing of its batch is stored.
 */
export function assertMergeable(r: RecentRow): void {
  const bad = refuser(r, 'a row');
  assertEnds(r, bad);
  if (!Number.isSafeInteger(r.observed_count) || r.observed_count < 1) bad('observed_count');
  if (typeof r.first_seen !== 'string' || !TIMESTAMP_RE.test(r.first_seen)) bad('first_seen');
  if (typeof r.last_seen !== 'string' || !TIMESTAMP_RE.test(r.last_seen)) bad('last_seen');
  if (!isOneOf(CONFIDENCES, r.confidence)) bad('confidence');
  if (typeof r.signal_source !== 'string') bad('signal_source');
}

/** As {@link assertMergeable}, for a grant: the row a fold would insert has no observations, so no seen-range or confidence. */
export function assertGrantable(r: GrantRow): void {
  const bad = refuser(r, 'a grant');
  assertEnds(r, bad);
  if (typeof r.source !== 'string') bad('source');
}

/** Whether `waiting` rows are enough for a merge (`SERVICE_ACCESSMAP_MERGE_ROWS`). */
export function mergeDue(waiting: number): boolean {
  return waiting >= (mergeRows ??= mergeRowsFromEnv());
}
