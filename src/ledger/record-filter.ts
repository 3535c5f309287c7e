/** The list filters of `GET /v1/audit` and the export, as SQL on both backends. */
import { sql, type RawBuilder } from 'kysely';

/** Filters of `GET /v1/audit` and the export (all optional, combined with AND). */
export interface RecordFilter {
  /** action prefix, e.g. `agent.` or `agent.create` */
  action?: string;
  actor?: string;
  target_kind?: string;
  target_id?: string;
  /** occurred_at ≥ since (canonical 9-digit text, which sorts as time) */
  since?: string;
  /** occurred_at < until */
  until?: string;
  /** seq ≤ toSeq (export pages; without it a selective filter scans to the chain's end) */
  toSeq?: number;
}

/**
 * The list filters as (left-hand side, bound value) terms, e.g. `['r.actor =', 'user:…']`: one
 * definition for both backends' SQL (column names are the same) and for the workers' prepared text.
 */
export function filterTerms(filter: RecordFilter): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (filter.action !== undefined && filter.action !== '') {
    // A prefix range instead of LIKE: no wildcard escaping, and the comparison is byte-wise on both backends.
    out.push(['r.action >=', filter.action], ['r.action <', `${filter.action}\u{10FFFF}`]);
  }
  if (filter.actor !== undefined) out.push(['r.actor =', filter.actor]);
  if (filter.target_kind !== undefined) out.push(['r.target_kind =', filter.target_kind]);
  if (filter.target_id !== undefined) out.push(['r.target_id =', filter.target_id]);
  if (filter.since !== undefined) out.push(['r.occurred_at >=', filter.since]);
  if (filter.until !== undefined) out.push(['r.occurred_at <', filter.until]);
  return out;
}

export function filterSql(filter: RecordFilter): RawBuilder<unknown>[] {
  return filterTerms(filter).map(([lhs, value]) => sql`${sql.raw(lhs)} ${value}`);
}

export function hasRowFilter(filter: RecordFilter): boolean {
  return (
    (filter.action !== undefined && filter.action !== '') ||
    filter.actor !== undefined ||
    filter.target_kind !== undefined ||
    filter.target_id !== undefined ||
    filter.since !== undefined ||
    filter.until !== undefined
  );
}
