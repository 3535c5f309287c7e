/**
 * The recent level of access edges on SQLite (docs/accessmap.md "Storage"): observations, grants
 * and agent deletes are committed to `access_edges_recent` in svc.db, an append-only table in
 * commit order, and folded into `access_edges`, which lives in the edge file beside it
 * (store/sqlite/edge-file.ts), by a merge worker thread (merge-worker.ts).
 *
 * Why: `access_edges` has two indexes an edge lands in at a random place (the key and the resource
 * index). Upserting a batch straight into them dirties about one leaf page per edge in each, and
 * WAL mode writes every dirty page whole at each commit: kilobytes per edge once the indexes
 * outgrow the page cache. Appending to the recent level writes only the new rows; a merge of many
 * commits' rows writes each index page it touches once. With the edges in a file of their own, a
 * merge holds that file's writer, not svc.db's: ingest goes on beside it on the other core.
 *
 * What stays true:
 * - Durable when acknowledged: the rows are committed (synchronous=FULL) with the caller's
 *   transaction, like any other write. A merge is one transaction of the edge file that folds the
 *   rows above the mark (`access_edges_merged`) and moves the mark past them; rows at or below the
 *   mark are removed from the level later, by a transaction that has not written the edge file
 *   (`collectMerged`), so the mark it reads is committed. A crash leaves every row either above
 *   the mark, in the level, or at or below it and folded; never both, never neither.
 * - Read your writes: every read of edges first has the worker fold everything committed, then
 *   checks in its own transaction that it sees that merge (`withFolded`), so nothing committed
 *   before the read is invisible; on an empty level that is a round trip to the worker.
 * - Same answers: the merge applies the rows in commit order with the very upsert a direct write
 *   uses (`OBSERVE_SET`), so folding later gives the edges direct upserts would have given.
 * - Grants and agent deletes wait in the level too (migration 16): each is a row of its own, its
 *   seq marked `grant` or `forget` in `access_edges_recent_ops`, and a fold applies observations
 *   and operations in seq order, the observations between two operations with one merge statement.
 *   Revokes, whose answer counts the edges they changed, run on the worker after a fold of
 *   everything committed before them (`applyRevokes`).
 * - An agent deleted while its observations wait is not brought back: its `forget` comes after
 *   them in the level (agent-service.ts), and no row after it can name the agent, so the merge
 *   never meets a row of an agent that is gone and tests none against `agents`.
 * - The rows a merge writes meet access_edges' CHECKs, checked once, on the way in: `appendRecent`
 *   refuses a row that any of them would refuse (`assertMergeable`), and the merge then runs with
 *   CHECKs off (`ignore_check_constraints`), since SQLite's GLOB checks of the UUID and timestamp
 *   columns cost about as much as the rest of the merge (docs/perf/accessmap-checked-once-merges-without-checks.md).
 *   NOT NULL, UNIQUE and STRICT types are still enforced by the merge, and `PRAGMA
 *   integrity_check` verifies every CHECK of the table afterwards.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle, Store } from '../../store/store-types.js';
import { CONFIDENCES, MODES, ORIGIN_KINDS } from './model.js';
import { newId } from '../../store/ids.js';
import { mergeThread, type MergeThread } from './merge-thread.js';
import type { RevokedAccess } from './model.js';

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
  if (!Number.isInteger(n) || n < 1_000 || n > 10_000_000) throw new RangeError(`SERVICE_ACCESSMAP_MERGE_ROWS must be an integer from 1000 to 10000000, got ${JSON.stringify(raw)}`);
  return n;
}

let mergeRows: number | undefined;

/** How an observation meets an existing edge (`excluded` = the incoming row); one text for every write path. */
const rankOf = (col: string): string => `case ${col} when 'high' then 3 when 'medium' then 2 when 'low' then 1 else 0 end`;
export const OBSERVE_SET = {
  observed_count: 'access_edges.observed_count + excluded.observed_count',
  first_seen: 'case when access_edges.first_seen is null or excluded.first_seen < access_edges.first_seen then excluded.first_seen else access_edges.first_seen end',
  last_seen: 'case when access_edges.last_seen is null or excluded.last_seen >= access_edges.last_seen then excluded.last_seen else access_edges.last_seen end',
  signal_source: 'case when access_edges.last_seen is null or excluded.last_seen >= access_edges.last_seen then excluded.signal_source else access_edges.signal_source end',
  confidence: `case when ${rankOf('excluded.confidence')} > ${rankOf('access_edges.confidence')} then excluded.confidence else access_edges.confidence end`,
  updated_at: 'excluded.updated_at',
} as const;

/** What every row of the recent level names: the edge it makes (id), its tenant, its two ends by id and number, the mode, when it was committed. */
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

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A stored timestamp: the CHECK's GLOB digit for digit (sqlite-checks.ts); whether the date exists is the caller's question (edge-store.ts asks Date.parse). */
export const TIMESTAMP_RE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z$/;
const isOneOf = (list: readonly string[], v: unknown): boolean => typeof v === 'string' && list.includes(v);

/** The fields an observation's row and a grant's share, held to access_edges' CHECKs; `what` names the row in the error. */
type Refuse = (what: string) => never;
function refuser(r: object, what: string): Refuse {
  return (field) => {
    throw new Error(`accessmap recent level: refusing ${what} that access_edges' CHECKs would refuse (${field}: ${JSON.stringify((r as Record<string, unknown>)[field])})`);
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

const RECENT_COLUMNS = ['id', 'tenant_id', 'origin_kind', 'origin_id', 'origin_no', 'resource_id', 'resource_no', 'mode', 'observed_count', 'first_seen', 'last_seen', 'confidence', 'signal_source', 'recorded_at'] as const;

// Rows per multi-row insert (14 × 200 parameters).
const MULTI = 200;

interface Statements {
  one: ReturnType<SqliteHandle['prepare']>;
  many: ReturnType<SqliteHandle['prepare']>;
  checksOff: ReturnType<SqliteHandle['prepare']>;
  checksOn: ReturnType<SqliteHandle['prepare']>;
  oldest: ReturnType<SqliteHandle['prepare']>;
  newest: ReturnType<SqliteHandle['prepare']>;
  merge: ReturnType<SqliteHandle['prepare']>;
  opMark: ReturnType<SqliteHandle['prepare']>;
  opsIn: ReturnType<SqliteHandle['prepare']>;
  grant: ReturnType<SqliteHandle['prepare']>;
  forget: ReturnType<SqliteHandle['prepare']>;
  empty: ReturnType<SqliteHandle['prepare']>;
  emptyOps: ReturnType<SqliteHandle['prepare']>;
  emptyUpTo: ReturnType<SqliteHandle['prepare']>;
  emptyOpsUpTo: ReturnType<SqliteHandle['prepare']>;
  mark: ReturnType<SqliteHandle['prepare']>;
  setMark: ReturnType<SqliteHandle['prepare']>;
  revokeDelete: ReturnType<SqliteHandle['prepare']>;
  revokeUpdate: ReturnType<SqliteHandle['prepare']>;
}

const prepared = new WeakMap<SqliteHandle, Statements>();

/**
 * The fold of the waiting observations with seqs from one bound to another into access_edges (the
 * operations among them are applied between two such folds, `foldRange`). Commit order (seq):
 * later rows meet earlier ones exactly as sequential upserts would. Key order (commit order within
 * a key) folded 8-15% faster, since it walks the key index once from end to end, but at 10M edges
 * path searches afterwards were slower (reachability p95 115-137 ms in three runs against 62 and
 * 102 ms after commit-order merges), and that read has a target. The WHERE (a range of the rowid)
 * also keeps the upsert's ON from parsing as a join constraint (sqlite.org/lang_upsert.html). No
 * row is tested against `agents`: an agent's delete comes after its rows in the level (a `forget`
 * operation) or, with nothing waiting, removes its edges at once (migration 16).
 */
function mergeSql(): string {
  return `insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, permitted, grant_source, observed_count, first_seen, last_seen, confidence, signal_source, created_at, updated_at)
     select r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, 0, '', r.observed_count, r.first_seen, r.last_seen, r.confidence, r.signal_source, r.recorded_at, r.recorded_at
     from access_edges_recent r
     where r.seq between ? and ?
     order by r.seq
     on conflict (origin_no, resource_no, mode) do update set ${Object.entries(OBSERVE_SET).map(([c, e]) => `${c} = ${e}`).join(', ')}`;
}

function statements(db: SqliteHandle): Statements {
  let s = prepared.get(db);
  if (s === undefined) {
    const row = `(${RECENT_COLUMNS.map(() => '?').join(', ')})`;
    const head = `insert into access_edges_recent (${RECENT_COLUMNS.join(', ')}) values `;
    s = {
      one: db.prepare(head + row),
      many: db.prepare(head + Array.from({ length: MULTI }, () => row).join(', ')),
      checksOff: db.prepare('pragma ignore_check_constraints = 1'),
      checksOn: db.prepare('pragma ignore_check_constraints = 0'),
      // seq is an INTEGER PRIMARY KEY and the level is only ever emptied whole or from its oldest
      // row up, so its seqs are contiguous: rows above the mark are counted with two index lookups
      // and the mark (one query each: SQLite looks min or max up in the index only when it is a
      // query's only aggregate).
      oldest: db.prepare('select min(seq) as s from access_edges_recent'),
      newest: db.prepare('select max(seq) as s from access_edges_recent'),
      merge: db.prepare(mergeSql()),
      opMark: db.prepare('insert into access_edges_recent_ops (seq, op) values (?, ?)'),
      opsIn: db.prepare(`select o.seq, o.op, r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, r.signal_source, r.recorded_at
        from access_edges_recent_ops o join access_edges_recent r on r.seq = o.seq where o.seq between ? and ? order by o.seq`),
      // A grant marks the access permitted and names its source; an edge it creates has no observations.
      grant: db.prepare(`insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, permitted, grant_source, observed_count, first_seen, last_seen, confidence, signal_source, created_at, updated_at)
        values (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 0, null, null, '', ?, ?, ?)
        on conflict (origin_no, resource_no, mode) do update set permitted = 1, grant_source = excluded.grant_source, updated_at = excluded.updated_at`),
      // An agent deleted: its edges go, found by its number, which the key starts with.
      forget: db.prepare('delete from access_edges where tenant_id = ? and origin_no = ?'),
      // Without a WHERE, SQLite empties the table by dropping its pages (the truncate optimization).
      empty: db.prepare('delete from access_edges_recent'),
      emptyOps: db.prepare('delete from access_edges_recent_ops'),
      emptyUpTo: db.prepare('delete from access_edges_recent where seq <= ?'),
      emptyOpsUpTo: db.prepare('delete from access_edges_recent_ops where seq <= ?'),
      // In the edge file (store/sqlite/edge-file.ts): the level's rows the edges hold.
      mark: db.prepare('select up_to from access_edges_merged'),
      setMark: db.prepare('update access_edges_merged set up_to = ?'),
      // A revoke: the edge goes if nothing was observed on it, else it stays, no longer permitted.
      revokeDelete: db.prepare('delete from access_edges where origin_no = ? and resource_no = ? and mode = ? and tenant_id = ? and observed_count = 0'),
      revokeUpdate: db.prepare("update access_edges set permitted = 0, grant_source = '', updated_at = ? where origin_no = ? and resource_no = ? and mode = ? and tenant_id = ?"),
    };
    prepared.set(db, s);
  }
  return s;
}

/** Appends folded observations to the recent level, on the connection of the caller's transaction; throws, appending nothing, if one is not {@link assertMergeable}. */
export function appendRecent(db: SqliteHandle, rows: readonly RecentRow[]): void {
  for (const r of rows) assertMergeable(r);
  const s = statements(db);
  const params: unknown[] = [];
  let i = 0;
  for (; i + MULTI <= rows.length; i += MULTI) {
    params.length = 0;
    for (let j = i; j < i + MULTI; j++) {
      const r = rows[j] as RecentRow;
      params.push(r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, r.observed_count, r.first_seen, r.last_seen, r.confidence, r.signal_source, r.recorded_at);
    }
    s.many.run(...params);
  }
  for (; i < rows.length; i++) {
    const r = rows[i] as RecentRow;
    s.one.run(r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, r.observed_count, r.first_seen, r.last_seen, r.confidence, r.signal_source, r.recorded_at);
  }
}

/** Applies one grant to access_edges now; `r` passed {@link assertGrantable}. */
function applyGrant(s: Statements, r: GrantRow): void {
  s.grant.run(r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, r.source, r.source, r.recorded_at, r.recorded_at);
}

/**
 * Appends grants to the recent level, on the connection of the caller's transaction: each a row
 * of the level (its source in `signal_source`) whose seq `access_edges_recent_ops` marks as a
 * grant. A fold applies it in seq order, after the rows before it. Throws, appending nothing, if
 * one is not {@link assertGrantable}.
 */
export function appendGrants(db: SqliteHandle, rows: readonly GrantRow[]): void {
  for (const r of rows) assertGrantable(r);
  const s = statements(db);
  for (const r of rows) {
    const { lastInsertRowid } = s.one.run(r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, 0, '', '', '', r.source, r.recorded_at);
    s.opMark.run(lastInsertRowid, 'grant');
  }
}

/**
 * Appends the delete of an agent's edges to the recent level, on the connection of the caller's
 * transaction: a row of the level naming the agent and its number, whose seq
 * `access_edges_recent_ops` marks `forget`. A fold removes the agent's edges after merging the
 * rows before it; no row after it can name the agent (agent-service.ts deletes the agent in the
 * same transaction).
 */
export function appendForget(db: SqliteHandle, tenant: string, agentId: string, agentNo: number, at: string): void {
  if (!UUID_RE.test(tenant) || !UUID_RE.test(agentId) || !Number.isSafeInteger(agentNo) || !TIMESTAMP_RE.test(at)) {
    throw new Error(`accessmap recent level: refusing to forget ${JSON.stringify({ tenant, agentId, agentNo, at })}`);
  }
  const s = statements(db);
  const { lastInsertRowid } = s.one.run(newId(), tenant, 'agent', agentId, agentNo, '', null, '', 0, '', '', '', '', at);
  s.opMark.run(lastInsertRowid, 'forget');
}

/** An operation waiting in the level, as {@link foldRange} reads it. */
type WaitingOp = GrantRow & { seq: number; op: string; signal_source: string };

/**
 * Folds the waiting rows with seqs from `lo` to `hi` into access_edges, in seq order: the
 * observations between two operations (grants, agents forgotten) with one merge statement each,
 * each operation after the rows before it. With no operation waiting (the usual case under
 * ingest) that is the one merge statement.
 */
function foldRange(s: Statements, lo: number, hi: number): void {
  let from = lo;
  for (const o of s.opsIn.all(lo, hi) as WaitingOp[]) {
    if (from < o.seq) s.merge.run(from, o.seq - 1);
    if (o.op === 'grant') applyGrant(s, { ...o, source: o.signal_source });
    else if (o.op === 'forget') s.forget.run(o.tenant_id, o.origin_no);
    else throw new Error(`accessmap recent level: unknown operation ${JSON.stringify(o.op)} at seq ${o.seq}`);
    from = o.seq + 1;
  }
  if (from <= hi) s.merge.run(from, hi);
}

/**
 * Runs a merge with CHECK constraints off on the connection, and on again afterwards whatever
 * happens. Every row of the level passed {@link assertMergeable} (a grant {@link assertGrantable})
 * on its way in. Changing the flag expires the connection's prepared statements (SQLite recompiles each on its next use, with the
 * flag as it then is), so the merge statement runs without the CHECKs and every other
 * statement with them.
 */
function withoutChecks(s: Statements, merge: () => void): void {
  s.checksOff.run();
  try {
    merge();
  } finally {
    s.checksOn.run();
  }
}

function markOf(s: Statements): number {
  return Number((s.mark.get() as { up_to: number }).up_to);
}

/** Rows waiting in the recent level: those above the mark (rows at or below it are merged and wait only to be removed). */
export function waitingRows(db: SqliteHandle): number {
  const s = statements(db);
  const newest = (s.newest.get() as { s: number | null }).s;
  if (newest === null) return 0;
  const oldest = (s.oldest.get() as { s: number }).s;
  return newest - Math.max(markOf(s), oldest - 1);
}

/** Whether `waiting` rows are enough for a merge (`SERVICE_ACCESSMAP_MERGE_ROWS`). */
export function mergeDue(waiting: number): boolean {
  return waiting >= (mergeRows ??= mergeRowsFromEnv());
}

/**
 * Removes the level's rows at or below the mark (the edges hold them). Sound only in a
 * transaction that has not written the edge file: the mark it reads is then the committed one,
 * and a row is removed only once its merge is durable in the other file. Every transaction of the
 * service qualifies but a merge's, which calls this before it merges. Returns the rows removed.
 */
export function collectMerged(db: SqliteHandle): number {
  const s = statements(db);
  const oldest = (s.oldest.get() as { s: number | null }).s;
  if (oldest === null) return 0;
  const mark = markOf(s);
  if (mark < oldest) return 0;
  const newest = (s.newest.get() as { s: number }).s;
  if (mark >= newest) {
    // Without a WHERE, SQLite empties the table by dropping its pages (the truncate optimization).
    s.empty.run();
    s.emptyOps.run();
    return newest - oldest + 1;
  }
  s.emptyOpsUpTo.run(mark);
  return s.emptyUpTo.run(mark).changes;
}

/**
 * A merge: folds up to `rows` waiting rows (all by default), oldest first, into `access_edges` and
 * moves the mark past them, in the caller's transaction, which writes the edge file alone: the
 * merge worker's (merge-worker.ts). The rows stay in the level until a transaction of the store's
 * removes them ({@link collectMerged}) once this one has committed. Returns the rows folded.
 */
export function foldAbove(db: SqliteHandle, rows = Number.MAX_SAFE_INTEGER): number {
  const s = statements(db);
  const newest = (s.newest.get() as { s: number | null }).s;
  if (newest === null) return 0;
  const lo = Math.max(markOf(s) + 1, (s.oldest.get() as { s: number }).s);
  const hi = Math.min(newest, lo + rows - 1);
  if (hi < lo) return 0;
  // The worker's page cache (SERVICE_SQLITE_CACHE_MIB, 2 GiB by default) holds the index pages
  // the merge touches until its COMMIT writes each once; it is not raised here, so that number
  // bounds each connection's cache of each file at all times.
  withoutChecks(s, () => foldRange(s, lo, hi));
  s.setMark.run(hi);
  return hi - lo + 1;
}

export type { RevokedAccess } from './model.js';

/**
 * Withdraws grants in `access_edges`, after folding every waiting row (so the operations committed
 * before the revoke come first): an edge without observations goes, an observed one stays, no
 * longer permitted. On the merge worker, like a merge. Returns the edges changed.
 */
export function applyRevokes(db: SqliteHandle, tenant: string, accesses: readonly RevokedAccess[], at: string): number {
  foldAbove(db);
  const s = statements(db);
  let n = 0;
  for (const a of accesses) {
    n += s.revokeDelete.run(a.origin_no, a.resource_no, a.mode, tenant).changes;
    n += s.revokeUpdate.run(at, a.origin_no, a.resource_no, a.mode, tenant).changes;
  }
  return n;
}

/** Rows waiting before an idle writer starts a merge on the worker (below it, reads fold what waits). */
export const SLICE_ROWS = 1_000;
/** How long the writer must have been idle before that merge starts, in ms. */
const IDLE_MS = 1;

/**
 * A merge of everything committed, on the worker, not awaited by the ingest that asks for it (one
 * at a time: while one runs, it is the answer); once it has committed, the rows it merged leave the
 * level in a short transaction of the store's. A merge that fails is reported by the next read,
 * which runs the same merge and fails with it.
 */
export function mergeInBackground(store: Store): Promise<void> | undefined {
  const thread = mergeThread(store);
  if (thread === undefined || store.sqliteTransaction === undefined) return undefined;
  const wasBusy = thread.busy;
  const running = thread.background();
  if (wasBusy) return running.then(() => undefined);
  return running.then(async ({ collect }) => void (collect ? await store.sqliteTransaction?.(collectMerged) : undefined));
}

/**
 * Keeps the level short while ingest leaves the writer gaps: once `SLICE_ROWS` rows wait and the
 * writer has been idle for `IDLE_MS` (Store.whenWriterIdle), a merge starts on the worker
 * ({@link mergeInBackground}). Under back-to-back ingest the writer is never idle and the level
 * grows to `SERVICE_ACCESSMAP_MERGE_ROWS`, where ingest starts the merge itself (edge-store.ts).
 */
export function foldWhenIdle(store: Store, waiting: number): void {
  if (waiting < SLICE_ROWS || store.whenWriterIdle === undefined) return;
  store.whenWriterIdle('accessmap.recent-level', IDLE_MS, () => {
    mergeInBackground(store)?.catch(() => undefined);
    return false;
  });
}

/**
 * Makes every observation, grant and agent delete committed before the call visible in
 * `access_edges`: a merge on the worker of everything committed, then, if merged rows wait in the
 * level, their removal in a transaction of the store's. What each read of edges awaits before its transaction ({@link withFolded}) and each
 * revoke. Returns the mark the edge file then has (0 on Postgres, which has no recent level).
 */
export async function foldRecent(store: Store): Promise<number> {
  const thread = mergeThread(store);
  if (thread === undefined || store.sqliteTransaction === undefined) return 0;
  const { mark, collect } = await thread.call({ op: 'merge' });
  // A read with nothing merged to remove takes no transaction of the writer's (it would queue behind ingest's).
  if (collect) await store.sqliteTransaction(collectMerged);
  return mark;
}

/** A read's transaction that began on a snapshot of the edge file older than the merge it waited for. */
class StaleEdges extends Error {}

/**
 * Runs `fn` in a transaction of `tenant` that sees every edge committed before the call: the
 * level folded first ({@link foldRecent}), then, inside the transaction, the edge file's mark
 * checked against the one the merge reached. A transaction of the store's shares its BEGIN with
 * others (group commit); if one of them read the edge file before the merge committed, this one
 * reads that older snapshot, and runs again in a transaction of its own.
 */
export async function withFolded<T>(store: Store, tenant: string, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const need = await foldRecent(store);
    try {
      return await store.withTenant(tenant, async (tx) => {
        const db = store.sqliteHandle?.(tx);
        if (db !== undefined && markOf(statements(db)) < need) throw new StaleEdges(`edge file snapshot older than mark ${need}`);
        return fn(tx);
      });
    } catch (err) {
      if (!(err instanceof StaleEdges) || attempt >= 20) throw err;
    }
  }
}

/** A merge on the worker of up to `rows` waiting rows (all by default), whose rows stay in the level until the next transaction that removes them; for tests and benches. Returns the rows folded. */
export async function mergeOnWorker(store: Store, rows?: number): Promise<number> {
  const thread = mergeThread(store);
  if (thread === undefined) return 0;
  return (await thread.call(rows === undefined ? { op: 'merge' } : { op: 'merge', rows })).value;
}

/** Applies revokes on the worker ({@link applyRevokes}), then removes the merged rows from the level. Returns the edges changed. */
export async function revokeOnWorker(store: Store, tenant: string, accesses: RevokedAccess[], at: string): Promise<number> {
  const thread = mergeThread(store) as MergeThread;
  const { value, collect } = await thread.call({ op: 'revoke', tenant, accesses, at });
  if (collect) await store.sqliteTransaction?.(collectMerged);
  return value;
}
