/**
 * Access edges: observations (collector ingest and the REST write path) and grants meet in one
 * row per (origin, resource, mode). Observations add to `observed_count`, widen first/last seen
 * and keep the strongest attribution confidence; grants set `permitted`.
 */
import { busOf } from '../../events/bus-registry.js';
import { sql, type Insertable, type Transaction } from 'kysely';
import { errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle, Store } from '../../store/store-types.js';
import { assertTenantWritable } from '../../http/request-scope.js';
import {
  capConfidence,
  CONFIDENCES,
  MODES,
  ORIGIN_KINDS,
  strongerConfidence,
  type Attribution,
  type Confidence,
  type Mode,
  type OriginKind,
} from './model.js';
import { keepAfterCommit } from './node-cache.js';
import { chunks, resolveNodes, type NodeSpec, type ResolvedNode } from './node-store.js';
import {
  appendGrants,
  appendRecent,
  collectMerged,
  foldWhenIdle,
  mergeDue,
  mergeInBackground,
  OBSERVE_SET,
  revokeOnWorker,
  TIMESTAMP_RE,
  waitingRows,
  type GrantRow,
} from './recent-edges.js';

type Tx = Transaction<Database>;

/** One observed access, as a collector or an integration reports it. */
export interface Observation {
  origin: NodeSpec & { kind: OriginKind };
  resource: NodeSpec;
  mode: Mode;
  confidence: Confidence;
  /** how the source tied the access to the origin (default `direct`); caps `confidence` */
  attribution?: Attribution;
  signal_source: string;
  /** default now */
  observed_at?: string;
  /** occurrences summarised by this observation (default 1) */
  count?: number;
}

/** One permitted access (from a grant: IAM policy, ACL, token scope…). */
export interface GrantInput {
  origin: NodeSpec & { kind: OriginKind };
  resource: NodeSpec;
  mode: Mode;
  /** where the grant was read from, e.g. `iam`, `acl` */
  source: string;
}

interface Pending {
  origin_kind: OriginKind;
  origin_id: string;
  origin_no: number;
  resource_id: string;
  resource_no: number;
  mode: Mode;
  count: number;
  first: string;
  last: string;
  confidence: Confidence;
  signal_source: string;
}

const EDGE_COLUMNS = [
  'id',
  'tenant_id',
  'origin_kind',
  'origin_id',
  'origin_no',
  'resource_id',
  'resource_no',
  'mode',
  'permitted',
  'grant_source',
  'observed_count',
  'first_seen',
  'last_seen',
  'confidence',
  'signal_source',
  'created_at',
  'updated_at',
] as const;
type EdgeInsert = Required<Insertable<Database['access_edges']>>;

/**
 * Records observed edges. SQLite: appended to the recent level (recent-edges.ts), after removing
 * what the last merge took from it; returns the rows then waiting, for the caller to start a merge
 * once the transaction has committed (`mergeDue`; a merge writes the edge file, which a grouped
 * transaction never does). Postgres: one upsert of the whole batch; returns 0.
 */
async function upsertObserved(store: Store, tx: Tx, rows: EdgeInsert[]): Promise<number> {
  const db = store.sqlite?.handle(tx);
  if (db !== undefined) {
    collectMerged(db);
    appendRecent(
      db,
      rows.map((r) => ({
        id: r.id,
        tenant_id: r.tenant_id,
        origin_kind: r.origin_kind,
        origin_id: r.origin_id,
        origin_no: r.origin_no as number,
        resource_id: r.resource_id,
        resource_no: r.resource_no as number,
        mode: r.mode,
        observed_count: r.observed_count as number,
        first_seen: r.first_seen as string,
        last_seen: r.last_seen as string,
        confidence: r.confidence,
        signal_source: r.signal_source,
        recorded_at: r.updated_at,
      })),
    );
    return waitingRows(db);
  }
  // Postgres: the whole batch in one statement, its columns as arrays (unnest), so a batch of
  // 5,000 edges costs one round trip and one plan instead of five multi-row VALUES of 15,000 bound
  // parameters each. The batch is folded already: no access repeats, which ON CONFLICT requires.
  const col = <K extends keyof EdgeInsert>(k: K): unknown[] => rows.map((r) => r[k]);
  await sql`insert into access_edges (${sql.join(EDGE_COLUMNS.map((c) => sql.ref(c)))})
    select * from unnest(${col('id')}::uuid[], ${col('tenant_id')}::uuid[], ${col('origin_kind')}::text[], ${col('origin_id')}::uuid[],
      ${col('origin_no')}::bigint[],
      ${col('resource_id')}::uuid[], ${col('resource_no')}::bigint[], ${col('mode')}::text[], ${col('permitted')}::int[],
        ${col('grant_source')}::text[],
      ${col('observed_count')}::bigint[], ${col('first_seen')}::text[], ${col('last_seen')}::text[], ${col('confidence')}::text[],
      ${col('signal_source')}::text[], ${col('created_at')}::text[], ${col('updated_at')}::text[])
    on conflict (origin_no, resource_no, mode) do update set ${sql.raw(
      Object.entries(OBSERVE_SET)
        .map(([c, e]) => `${c} = ${e}`)
        .join(', '),
    )}`.execute(tx);
  return 0;
}

/** Resolves origin and resource specs of a batch to ids and numbers (origins grouped by kind). */
async function resolveEnds(
  store: Store,
  tx: Tx,
  tenant: string,
  items: Array<{ origin: NodeSpec & { kind: OriginKind }; resource: NodeSpec }>,
): Promise<Array<{ origin: ResolvedNode; resource: ResolvedNode }>> {
  const db = store.sqlite?.handle(tx);
  // A kind outside the model would match none of the passes below and leave its origin unresolved.
  items.forEach((it, i) => {
    if (!(ORIGIN_KINDS as readonly string[]).includes(it.origin.kind))
      throw errors.badRequest(`origin ${i}: kind must be agent, session or identity`);
  });
  const origin: ResolvedNode[] = new Array(items.length);
  for (const kind of ['agent', 'session', 'identity'] as const) {
    const idx = items.map((it, i) => (it.origin.kind === kind ? i : -1)).filter((i) => i >= 0);
    if (idx.length === 0) continue;
    const ids = await resolveNodes(
      tx,
      tenant,
      kind,
      idx.map((i) => (items[i] as (typeof items)[number]).origin),
      db,
    );
    idx.forEach((i, j) => (origin[i] = ids[j] as ResolvedNode));
  }
  const resource = await resolveNodes(
    tx,
    tenant,
    'resource',
    items.map((it) => it.resource),
    db,
  );
  return items.map((_, i) => ({ origin: origin[i] as ResolvedNode, resource: resource[i] as ResolvedNode }));
}

/**
 * Refuses what access_edges' CHECKs would refuse, before the batch is stored. On SQLite a batch
 * waits in the recent level and meets those CHECKs only when it is merged, after it was
 * acknowledged; one bad row there would fail every later merge (and so every read). The routes
 * and gRPC validate first; this holds the service function to the same rules for any caller.
 */
function assertStorable(o: Observation, at: string, i: number): void {
  const count = o.count ?? 1;
  if (!TIMESTAMP_RE.test(at) || Number.isNaN(Date.parse(at)))
    throw errors.badRequest(`observation ${i}: observed_at must be RFC 3339 UTC with 9 fractional digits`);
  if (!Number.isSafeInteger(count) || count < 1) throw errors.badRequest(`observation ${i}: count must be a positive integer`);
  if (!(MODES as readonly string[]).includes(o.mode)) throw errors.badRequest(`observation ${i}: mode must be r or rw`);
  if (!(CONFIDENCES as readonly string[]).includes(o.confidence))
    throw errors.badRequest(`observation ${i}: confidence must be high, medium or low`);
}

/**
 * Records a batch of observations in one transaction; the service function the REST write path
 * calls. Duplicates inside the batch are folded first (Postgres refuses to update one row twice in
 * one `ON CONFLICT` statement). Returns how many edges were touched.
 */
export async function ingestObservations(
  store: Store,
  tenant: string,
  observations: Observation[],
): Promise<{ accepted: number; edges: number }> {
  if (observations.length === 0) return { accepted: 0, edges: 0 };
  const bus = busOf(store);
  const out = await store.withTenant(tenant, async (tx) => {
    const r = await ingestInTransaction(store, tx, tenant, observations);
    // `edge.observed` in the same transaction (the durable event log), announced once committed.
    const events = bus
      ? await bus.record(tx, [
          { type: 'edge.observed', tenant, subject: `tenant/${tenant}`, data: { count: observations.length, edges: r.edges } },
        ])
      : [];
    return { ...r, events };
  });
  bus?.announce(out.events);
  await afterIngestCommit(store, out);
  return { accepted: out.accepted, edges: out.edges };
}

/**
 * What the recent level asks of a caller of {@link ingestInTransaction} once its transaction has
 * committed (merges run on the merge worker, recent-edges.ts): from `SERVICE_ACCESSMAP_MERGE_ROWS`
 * rows waiting, a merge starts and ingest goes on beside it; from twice that (the worker behind),
 * the answer waits for the running merge, so the level stays bounded. Below the threshold, a merge
 * starts when the writer is idle. Nothing on Postgres.
 */
export async function afterIngestCommit(store: Store, { waiting, keep }: IngestCommitted): Promise<void> {
  // The nodes the batch resolved, into the node cache (node-cache.ts): only now that it has committed.
  keep?.();
  if (waiting === 0) return;
  // Never an error here: the batch has committed (a failed answer would have it sent again); a
  // merge that fails fails the next read, which runs it again.
  if (mergeDue(waiting / 2)) await mergeInBackground(store)?.catch(() => undefined);
  else if (mergeDue(waiting)) mergeInBackground(store)?.catch(() => undefined);
  else foldWhenIdle(store, waiting);
}

/** What {@link afterIngestCommit} needs once the transaction of {@link ingestInTransaction} has committed. */
export interface IngestCommitted {
  /** rows then waiting in the recent level (SQLite; 0 on Postgres) */
  waiting: number;
  /** keeps the nodes the transaction resolved in the node cache (SQLite) */
  keep?: () => void;
}

/**
 * {@link ingestObservations} inside the caller's transaction `tx` (gRPC ingest commits a group of
 * batches in one); hand the result to {@link afterIngestCommit} once `tx` has committed.
 */
export async function ingestInTransaction(
  store: Store,
  tx: Tx,
  tenant: string,
  observations: Observation[],
): Promise<{ accepted: number; edges: number } & IngestCommitted> {
  if (observations.length === 0) return { accepted: 0, edges: 0, waiting: 0 };
  await assertTenantWritable(tx, tenant);
  const ends = await resolveEnds(store, tx, tenant, observations);
  const now = nowTimestamp();
  const folded = new Map<string, Pending>();
  observations.forEach((o, i) => {
    const e = ends[i] as { origin: ResolvedNode; resource: ResolvedNode };
    const at = o.observed_at ?? now;
    assertStorable(o, at, i);
    const conf = capConfidence(o.confidence, o.attribution ?? 'direct');
    const key = `${e.origin.no}|${e.resource.no}|${o.mode}`;
    const p = folded.get(key);
    if (!p) {
      folded.set(key, {
        origin_kind: o.origin.kind,
        origin_id: e.origin.id,
        origin_no: e.origin.no,
        resource_id: e.resource.id,
        resource_no: e.resource.no,
        mode: o.mode,
        count: o.count ?? 1,
        first: at,
        last: at,
        confidence: conf,
        signal_source: o.signal_source,
      });
      return;
    }
    p.count += o.count ?? 1;
    if (at < p.first) p.first = at;
    if (at >= p.last) {
      p.last = at;
      p.signal_source = o.signal_source;
    }
    p.confidence = strongerConfidence(p.confidence, conf);
  });
  const rows = [...folded.values()].map((p): EdgeInsert => ({
    id: newId(),
    tenant_id: tenant,
    origin_kind: p.origin_kind,
    origin_id: p.origin_id,
    origin_no: p.origin_no,
    resource_id: p.resource_id,
    resource_no: p.resource_no,
    mode: p.mode,
    permitted: 0,
    grant_source: '',
    observed_count: p.count,
    first_seen: p.first,
    last_seen: p.last,
    confidence: p.confidence,
    signal_source: p.signal_source,
    created_at: now,
    updated_at: now,
  }));
  const waiting = await upsertObserved(store, tx, rows);
  return { accepted: observations.length, edges: rows.length, waiting, keep: keepAfterCommit(tx) };
}

/**
 * Marks accesses as permitted (grants); an existing observed edge keeps its observations. SQLite:
 * the grants are appended to the recent level behind what waits there (a fold applies both in
 * commit order, so a grant costs no merge, and its transaction writes svc.db alone).
 */
export async function upsertGrants(store: Store, tenant: string, grants: GrantInput[]): Promise<{ edges: number }> {
  if (grants.length === 0) return { edges: 0 };
  return store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const ends = await resolveEnds(store, tx, tenant, grants);
    const now = nowTimestamp();
    const folded = new Map<
      string,
      {
        origin_kind: OriginKind;
        origin_id: string;
        origin_no: number;
        resource_id: string;
        resource_no: number;
        mode: Mode;
        source: string;
      }
    >();
    grants.forEach((g, i) => {
      const e = ends[i] as { origin: ResolvedNode; resource: ResolvedNode };
      folded.set(`${e.origin.no}|${e.resource.no}|${g.mode}`, {
        origin_kind: g.origin.kind,
        origin_id: e.origin.id,
        origin_no: e.origin.no,
        resource_id: e.resource.id,
        resource_no: e.resource.no,
        mode: g.mode,
        source: g.source,
      });
    });
    const db = store.sqlite?.handle(tx);
    if (db !== undefined) {
      appendGrants(
        db,
        [...folded.values()].map((g): GrantRow => ({ id: newId(), tenant_id: tenant, ...g, recorded_at: now })),
      );
      return { edges: folded.size };
    }
    const rows = [...folded.values()].map((g) => ({
      id: newId(),
      tenant_id: tenant,
      origin_kind: g.origin_kind,
      origin_id: g.origin_id,
      origin_no: g.origin_no,
      resource_id: g.resource_id,
      resource_no: g.resource_no,
      mode: g.mode,
      permitted: 1,
      grant_source: g.source,
      observed_count: 0,
      first_seen: null,
      last_seen: null,
      confidence: '',
      signal_source: g.source,
      created_at: now,
      updated_at: now,
    }));
    for (const chunk of chunks(rows, 1000)) {
      await tx
        .insertInto('access_edges')
        .values(chunk)
        .onConflict((oc) =>
          oc
            .columns(['origin_no', 'resource_no', 'mode'])
            .doUpdateSet({ permitted: 1, grant_source: sql`excluded.grant_source`, updated_at: sql`excluded.updated_at` }),
        )
        .execute();
    }
    return { edges: rows.length };
  });
}

/**
 * Withdraws grants: the edge stays only while it has observations. SQLite: the ends are resolved
 * in a grouped transaction (svc.db), then the merge worker applies the revoke after a fold of
 * everything committed before it (recent-edges.ts `applyRevokes`), since it writes the edge file.
 */
export async function revokeGrants(store: Store, tenant: string, grants: Array<Omit<GrantInput, 'source'>>): Promise<{ edges: number }> {
  let sqlite = false;
  const resolved = await store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const ends = await resolveEnds(store, tx, tenant, grants);
    const accesses = grants.map((g, i) => {
      const e = ends[i] as { origin: ResolvedNode; resource: ResolvedNode };
      return { origin_no: e.origin.no, resource_no: e.resource.no, mode: g.mode };
    });
    if (store.sqlite?.handle(tx) !== undefined) {
      sqlite = true;
      return { accesses, edges: 0 };
    }
    let n = 0;
    for (const a of accesses) {
      const gone = await tx
        .deleteFrom('access_edges')
        .where('tenant_id', '=', tenant)
        .where('origin_no', '=', a.origin_no)
        .where('resource_no', '=', a.resource_no)
        .where('mode', '=', a.mode)
        .where('observed_count', '=', 0)
        .executeTakeFirst();
      n += Number(gone.numDeletedRows);
      const res = await tx
        .updateTable('access_edges')
        .set({ permitted: 0, grant_source: '', updated_at: nowTimestamp() })
        .where('tenant_id', '=', tenant)
        .where('origin_no', '=', a.origin_no)
        .where('resource_no', '=', a.resource_no)
        .where('mode', '=', a.mode)
        .executeTakeFirst();
      n += Number(res.numUpdatedRows);
    }
    return { accesses, edges: n };
  });
  if (!sqlite) return { edges: resolved.edges };
  return { edges: await revokeOnWorker(store, tenant, resolved.accesses, nowTimestamp()) };
}
