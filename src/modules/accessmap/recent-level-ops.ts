/** The recent level's statements on one SQLite connection: append, fold into the edge file, collect merged rows, revoke. */
import type { SqliteHandle } from '../../store/store-types.js';
import type { RevokedAccess } from './model.js';
import { newId } from '../../store/ids.js';
import {
  OBSERVE_SET,
  type RecentRow,
  type GrantRow,
  UUID_RE,
  TIMESTAMP_RE,
  assertMergeable,
  assertGrantable,
} from './recent-level-rows.js';

const RECENT_COLUMNS = [
  'id',
  'tenant_id',
  'origin_kind',
  'origin_id',
  'origin_no',
  'resource_id',
  'resource_no',
  'mode',
  'observed_count',
  'first_seen',
  'last_seen',
  'confidence',
  'signal_source',
  'recorded_at',
] as const;

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
  return `insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, permitted, ` +
    `grant_source, observed_count, first_seen, last_seen, confidence, signal_source, created_at, updated_at)
     select r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, 0, '', r.observed_count, ` +
       `r.first_seen, r.last_seen, r.confidence, r.signal_source, r.recorded_at, r.recorded_at
     from access_edges_recent r
     where r.seq between ? and ?
     order by r.seq
     on conflict (origin_no, resource_no, mode) do update set ${Object.entries(OBSERVE_SET)
       .map(([c, e]) => `${c} = ${e}`)
       .join(', ')}`;
}

export function statements(db: SqliteHandle): Statements {
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
      opsIn: db.prepare(
        `select o.seq, o.op, r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, ` +
          `r.mode, r.signal_source, r.recorded_at
        from access_edges_recent_ops o join access_edges_recent r on r.seq = o.seq where o.seq between ? and ? order by o.seq`,
      ),
      // A grant marks the access permitted and names its source; an edge it creates has no observations.
      grant: db.prepare(
        `insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, ` +
          `permitted, grant_source, observed_count, first_seen, last_seen, confidence, signal_source, created_at, updated_at)
        values (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 0, null, null, '', ?, ?, ?)
        on conflict (origin_no, resource_no, mode) do update set permitted = 1, grant_source = excluded.grant_source, updated_at = ` +
          `excluded.updated_at`,
      ),
      // An agent deleted: its edges go, found by its number, which the key starts with.
      forget: db.prepare('delete from access_edges where tenant_id = ? and origin_no = ?'),
      // Without a WHERE, SQLite empties the table by dropping its pages (the truncate optimization).
      empty: db.prepare('delete from access_edges_recent'),
      emptyOps: db.prepare('delete from access_edges_recent_ops'),
      emptyUpTo: db.prepare('delete from access_edges_recent where seq <= ?'),
      emptyOpsUpTo: db.prepare('delete from access_edges_recent_ops where seq <= ?'),
      // In the edge file (sqlite-edge-file.ts): the level's rows the edges hold.
      mark: db.prepare('select up_to from access_edges_merged'),
      setMark: db.prepare('update access_edges_merged set up_to = ?'),
      // A revoke: the edge goes if nothing was observed on it, else it stays, no longer permitted.
      revokeDelete: db.prepare(
        'delete from access_edges where origin_no = ? and resource_no = ? and mode = ? and tenant_id = ? and observed_count = 0',
      ),
      revokeUpdate: db.prepare(
        "update access_edges set permitted = 0, grant_source = '', updated_at = ? where origin_no = ? and resource_no = ? and mode = " +
          '? and tenant_id = ?',
      ),
    };
    prepared.set(db, s);
  }
  return s;
}

/**
 * Appends folded observations to the recent level, on the connection of the caller's transaction; throws, appending nothing, if one is not
 * {@link assertMergeable}.
 */
export function appendRecent(db: SqliteHandle, rows: readonly RecentRow[]): void {
  for (const r of rows) assertMergeable(r);
  const s = statements(db);
  const params: unknown[] = [];
  let i = 0;
  for (; i + MULTI <= rows.length; i += MULTI) {
    params.length = 0;
    for (let j = i; j < i + MULTI; j++) {
      const r = rows[j] as RecentRow;
      params.push(
        r.id,
        r.tenant_id,
        r.origin_kind,
        r.origin_id,
        r.origin_no,
        r.resource_id,
        r.resource_no,
        r.mode,
        r.observed_count,
        r.first_seen,
        r.last_seen,
        r.confidence,
        r.signal_source,
        r.recorded_at,
      );
    }
    s.many.run(...params);
  }
  for (; i < rows.length; i++) {
    const r = rows[i] as RecentRow;
    s.one.run(
      r.id,
      r.tenant_id,
      r.origin_kind,
      r.origin_id,
      r.origin_no,
      r.resource_id,
      r.resource_no,
      r.mode,
      r.observed_count,
      r.first_seen,
      r.last_seen,
      r.confidence,
      r.signal_source,
      r.recorded_at,
    );
  }
}

/** Applies one grant to access_edges now; `r` passed {@link assertGrantable}. */
function applyGrant(s: Statements, r: GrantRow): void {
  s.grant.run(
    r.id,
    r.tenant_id,
    r.origin_kind,
    r.origin_id,
    r.origin_no,
    r.resource_id,
    r.resource_no,
    r.mode,
    r.source,
    r.source,
    r.recorded_at,
    r.recorded_at,
  );
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
    const { lastInsertRowid } = s.one.run(
      r.id,
      r.tenant_id,
      r.origin_kind,
      r.origin_id,
      r.origin_no,
      r.resource_id,
      r.resource_no,
      r.mode,
      0,
      '',
      '',
      '',
      r.source,
      r.recorded_at,
    );
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

export function markOf(s: Statements): number {
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

