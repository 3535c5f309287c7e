/**
 * The recent level of access edges on SQLite (docs/accessmap.md "Storage"): observations, grants
 * and agent deletes are committed to `access_edges_recent` in svc.db, an append-only table in
 * commit order, and folded into `access_edges`, which lives in the edge file beside it
 * (sqlite-edge-file.ts), by a merge worker thread (merge-worker.ts).
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
export * from './recent-level-rows.js';
export * from './recent-level-ops.js';
export * from './recent-level-schedule.js';
export type { RevokedAccess } from './model.js';
