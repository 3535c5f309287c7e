/**
 * Reading the access graph: the `graph` page (edges under filters) and the `drift` page. Both
 * are keyset pages, so a page walk survives concurrent ingest: pages of the whole tenant walk the
 * edge id (UUIDv7, `(tenant_id, id)`); pages filtered by origin or resource walk `seq`, the order
 * edges were stored in (migration 14), which is the order of the resource index and grows with
 * every edge stored (`pageOrder`).
 *
 * Drift (docs/accessmap.md "Drift"): `unexpected` = observed but no grant covers it (a grant in
 * `rw` covers an observed `r`); `unused` = granted but never observed in a covering mode (an
 * observed `rw` uses an `r` grant). Confidence is stated, never assumed: an unexpected access
 * carries the attribution confidence of its observations; an unused grant is at most `medium`
 * (absence of a signal is never proof), and `low` when nothing at all was ever observed from its
 * origin (we may simply not see that origin).
 */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store-types.js';
import { decodeCursor, decodeSeqCursor, encodeCursor, encodeSeqCursor } from '../../contract/cursor.js';
import { confidencesAtLeast, type AccessEdge, type Confidence, type Mode, type OriginKind } from './model.js';
import { chunks } from './node-store.js';
import { numbersOf, tenantCheck } from './node-lookup.js';
import { withFolded } from './recent-edges.js';

/** Filters of `graph` and `drift` (spec client inputs). */
export interface EdgeFilter {
  confidence?: Confidence;
  mode?: Mode;
  origin_id?: string;
  origin_kind?: OriginKind;
  resource_id?: string;
  signal_source?: string;
  cursor?: string;
  limit: number;
}

export type DriftKind = 'unexpected' | 'unused';

/** A drift finding: the edge, which kind of drift, and how sure we are. */
export interface DriftItem extends AccessEdge {
  drift: DriftKind;
  drift_confidence: Confidence;
  /** why the confidence is what it is, in words */
  basis: string;
}

export interface Page<T> {
  items: T[];
  has_more: boolean;
  cursor?: string;
}

type EdgeRow = {
  seq: number | string;
  id: string;
  origin_kind: string;
  origin_id: string;
  resource_id: string;
  mode: string;
  permitted: number;
  grant_source: string;
  observed_count: number | string;
  first_seen: string | null;
  last_seen: string | null;
  confidence: string;
  signal_source: string;
  updated_at: string;
};

// The other edges of the same access or origin, sought by node number through the key (an edge's
// numbers name nodes of its own tenant, so the same numbers are the same tenant).
const COVERED = sql`exists (select 1 from access_edges p where p.origin_no = e.origin_no and p.resource_no = e.resource_no and
  p.permitted = 1 and
  (p.mode = e.mode or p.mode = 'rw'))`;
const USED = sql`exists (select 1 from access_edges o where o.origin_no = e.origin_no and o.resource_no = e.resource_no and
  o.observed_count > 0 and
  (o.mode = e.mode or o.mode = 'rw'))`;
const ORIGIN_SEEN = sql`exists (select 1 from access_edges s where s.origin_no = e.origin_no and s.observed_count > 0)`;
const DRIFT_KIND = sql`case when e.observed_count > 0 and not ${COVERED} then
  'unexpected' when e.permitted = 1 and not ${USED} then 'unused' end`;
const DRIFT_CONF = sql`case when e.observed_count > 0 then e.confidence when ${ORIGIN_SEEN} then 'medium' else 'low' end`;
const EDGE_COLUMNS = sql`e.seq, e.id, e.origin_kind, e.origin_id, e.resource_id, e.mode, e.permitted, e.grant_source, e.observed_count,
  e.first_seen,
  e.last_seen, e.confidence, e.signal_source, e.updated_at`;

/** Node numbers of the origin and resource filters (migration 10); -1 for an id that names no node of the tenant, which matches nothing. */
export interface FilterNumbers {
  origin_no?: number;
  resource_no?: number;
}

/** Looks up the numbers of `f`'s origin and resource filters, inside the read's transaction. */
export async function filterNumbers(
  tx: Transaction<Database>,
  tenant: string,
  f: { origin_id?: string; resource_id?: string },
): Promise<FilterNumbers> {
  const ids = [f.origin_id, f.resource_id].filter((id): id is string => id !== undefined && id !== '');
  if (ids.length === 0) return {};
  const found = await numbersOf(tx, tenant, ids);
  const out: FilterNumbers = {};
  if (f.origin_id) out.origin_no = found.get(f.origin_id) ?? -1;
  if (f.resource_id) out.resource_no = found.get(f.resource_id) ?? -1;
  return out;
}

/**
 * The key a page walks: `seq` when it seeks a node's edges (an origin or resource filter), whose
 * order the resource index holds with no more than the node number; else `id`, the tenant's own
 * order through `(tenant_id, id)`. The cursor names which (a cursor of the other order is a 400).
 */
type PageOrder = 'seq' | 'id';
const pageOrder = (n: FilterNumbers): PageOrder => (n.origin_no !== undefined || n.resource_no !== undefined ? 'seq' : 'id');

/** `e.<order key> > <the cursor's key>`; 400 for a cursor of the other order. */
function afterCursor(order: PageOrder, cursor: string): RawBuilder<unknown> {
  return order === 'seq' ? sql`e.seq > ${decodeSeqCursor(cursor)}` : sql`e.id > ${decodeCursor(cursor)}`;
}

function conditions(tenant: string, f: EdgeFilter, n: FilterNumbers): RawBuilder<unknown>[] {
  // With a node filter the page seeks that node's edges by number and the tenant is checked on
  // the rows (tenantCheck); without one it walks the tenant's edges in id order.
  const order = pageOrder(n);
  const where: RawBuilder<unknown>[] = [order === 'seq' ? tenantCheck('e.tenant_id', tenant) : sql`e.tenant_id = ${tenant}`];
  if (f.cursor) where.push(afterCursor(order, f.cursor));
  if (f.mode) where.push(sql`e.mode = ${f.mode}`);
  if (f.origin_id) where.push(sql`e.origin_no = ${n.origin_no ?? -1}`, sql`e.origin_id = ${f.origin_id}`);
  if (f.origin_kind) where.push(sql`e.origin_kind = ${f.origin_kind}`);
  if (f.resource_id) where.push(sql`e.resource_no = ${n.resource_no ?? -1}`, sql`e.resource_id = ${f.resource_id}`);
  if (f.signal_source) where.push(sql`e.signal_source = ${f.signal_source}`);
  return where;
}

/**
 * `with … from <edges> e` for a page: an origin filter (without a resource filter) reads that
 * principal's edges through the key (origin first) and sorts them by seq. Left to itself the
 * planner could walk the table in seq order and filter every edge. A materialized CTE keeps the
 * plan on both backends.
 */
export function edgeSource(
  tenant: string,
  f: { origin_no?: number; resource_no?: number },
  columns: RawBuilder<unknown> = EDGE_COLUMNS,
): RawBuilder<unknown> {
  return f.origin_no !== undefined && f.resource_no === undefined
    ? sql`with of_origin as materialized (select * from access_edges where ${tenantCheck('tenant_id', tenant)} and origin_no =
      ${f.origin_no}) select ${columns} from of_origin e`
    : sql`select ${columns} from access_edges e`;
}

function inList(values: readonly string[]): RawBuilder<unknown> {
  return sql`(${sql.join(values.map((v) => sql`${v}`))})`;
}

/** Attaches display names of origins and resources (one lookup per page, not per row). */
async function withNames(tx: Transaction<Database>, tenant: string, rows: EdgeRow[]): Promise<AccessEdge[]> {
  const names = new Map<string, string>();
  const agentIds = [...new Set(rows.filter((r) => r.origin_kind === 'agent').map((r) => r.origin_id))];
  const nodeIds = [...new Set(rows.flatMap((r) => (r.origin_kind === 'agent' ? [r.resource_id] : [r.origin_id, r.resource_id])))];
  for (const c of chunks(agentIds, 500))
    for (const a of await tx.selectFrom('agents').select(['id', 'name']).where('tenant_id', '=', tenant).where('id', 'in', c).execute())
      names.set(a.id, a.name);
  for (const c of chunks(nodeIds, 500))
    for (const n of await tx
      .selectFrom('access_nodes')
      .select(['id', 'name'])
      .where('tenant_id', '=', tenant)
      .where('id', 'in', c)
      .execute())
      names.set(n.id, n.name);
  return rows.map((r) => toEdge(r, names));
}

/** Serves a stored edge row. */
export function toEdge(r: EdgeRow, names: Map<string, string> = new Map()): AccessEdge {
  const count = Number(r.observed_count);
  return {
    id: r.id,
    origin_kind: r.origin_kind as OriginKind,
    origin_id: r.origin_id,
    origin_name: names.get(r.origin_id) ?? null,
    resource_id: r.resource_id,
    resource_name: names.get(r.resource_id) ?? null,
    mode: r.mode as Mode,
    permitted: Number(r.permitted) === 1,
    grant_source: r.grant_source,
    observed: count > 0,
    observed_count: count,
    first_seen: r.first_seen,
    last_seen: r.last_seen,
    confidence: r.confidence === '' ? null : (r.confidence as Confidence),
    signal_source: r.signal_source,
    updated_at: r.updated_at,
  };
}

/** A page from `limit + 1` items and their rows (same positions): the cursor names the last row's key in `order`. */
function pageFrom<T>(items: T[], rows: ReadonlyArray<{ id: string; seq: number | string }>, limit: number, order: PageOrder): Page<T> {
  const more = items.length > limit;
  const kept = more ? items.slice(0, limit) : items;
  const last = rows[kept.length - 1];
  if (!more || last === undefined) return { items: kept, has_more: false };
  return { items: kept, has_more: true, cursor: order === 'seq' ? encodeSeqCursor(last.seq) : encodeCursor(last.id) };
}

/** One page of the graph's edges under the filters; `confidence` is a floor and matches observed edges only. */
export async function listEdges(store: Store, tenant: string, f: EdgeFilter): Promise<Page<AccessEdge>> {
  return withFolded(store, tenant, async (tx) => {
    const n = await filterNumbers(tx, tenant, f);
    const where = conditions(tenant, f, n);
    if (f.confidence) where.push(sql`e.confidence in ${inList(confidencesAtLeast(f.confidence))}`);
    const order = pageOrder(n);
    const res =
      await sql<EdgeRow>`${edgeSource(tenant, n)} where ${sql.join(where, sql` and `)}
        order by ${sql.ref(`e.${order}`)} limit ${f.limit + 1}`.execute(
        tx,
      );
    return pageFrom(await withNames(tx, tenant, res.rows), res.rows, f.limit, order);
  });
}

/**
 * One page of drift findings under the filters (plus `drift` to pick one kind). `fold: false` reads
 * the edges as last merged instead of folding the recent level first: for a background walk that
 * folded once at its start, so that each of its pages does not force a merge of newer ingest.
 */
export async function listDrift(
  store: Store,
  tenant: string,
  f: EdgeFilter & { drift?: DriftKind },
  opts: { fold?: boolean } = {},
): Promise<Page<DriftItem>> {
  const outer: RawBuilder<unknown>[] = [sql`d.drift is not null`];
  if (f.drift) outer.push(sql`d.drift = ${f.drift}`);
  if (f.confidence) outer.push(sql`d.drift_confidence in ${inList(confidencesAtLeast(f.confidence))}`);
  const read = <T>(fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> =>
    opts.fold === false ? store.withTenant(tenant, fn) : withFolded(store, tenant, fn);
  return read(async (tx) => {
    const n = await filterNumbers(tx, tenant, f);
    const where = conditions(tenant, f, n);
    const order = pageOrder(n);
    const res = await sql<EdgeRow & { drift: DriftKind; drift_confidence: Confidence; origin_seen: number | boolean }>`
      select * from (
        ${edgeSource(tenant, n, sql`${EDGE_COLUMNS}, ${DRIFT_KIND} as drift, ${DRIFT_CONF} as drift_confidence`)} where
          ${sql.join(where, sql` and `)}
      ) d where ${sql.join(outer, sql` and `)} order by ${sql.ref(`d.${order}`)} limit ${f.limit + 1}`.execute(tx);
    const edges = await withNames(tx, tenant, res.rows);
    const items = edges.map((edge, i) => {
      const r = res.rows[i] as (typeof res.rows)[number];
      return { ...edge, drift: r.drift, drift_confidence: r.drift_confidence, basis: basisOf(edge, r.drift, r.drift_confidence) };
    });
    return pageFrom(items, res.rows, f.limit, order);
  });
}

function basisOf(edge: AccessEdge, drift: DriftKind, conf: Confidence): string {
  if (drift === 'unexpected') {
    const who =
      edge.origin_kind === 'identity'
        ? 'attributed to an identity only; which agent or person used it is not known'
        : `attributed to this ${edge.origin_kind}`;
    return (
      `observed ${edge.observed_count} time(s) via ${edge.signal_source || 'an unnamed source'} without a covering grant; ${who}; ` +
      `attribution confidence ${conf}`
    );
  }
  return conf === 'medium'
    ? 'granted, and this origin is observed elsewhere, but never in a mode that uses this grant; absence of a signal is not proof'
    : 'granted, and nothing was ever observed from this origin: the grant may be unused, or its use may be invisible to the connected ' +
        'sources';
}
