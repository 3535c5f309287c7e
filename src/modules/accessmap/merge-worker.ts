/**
 * The merge worker (docs/perf/accessmap-the-edge-file-and-merges-on-a-worker-thread.md): a thread with the only
 * connection that writes the edge file. It folds the recent level (in svc.db, attached read-only in
 * effect: nothing here writes it) into `access_edges` and moves the merged-up-to mark, one
 * transaction per request, and applies revokes after a fold of everything committed before them.
 * The store's thread keeps writing svc.db meanwhile; it removes the merged rows from the level
 * later (recent-edges.ts `collectMerged`).
 *
 * Its transactions take the edge file's write lock alone: `BEGIN` and at once a write to the edge
 * file that changes nothing (`BEGIN IMMEDIATE` would also lock svc.db, the store's file).
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import type { SqliteHandle } from '../../store/store-types.js';
import { applyRevokes, foldAbove, type RevokedAccess } from './recent-edges.js';
import type { MergeRequest, MergeReply, MergeWorkerData } from './merge-thread.js';

const config = workerData as MergeWorkerData;
const db = new BetterSqlite3(config.edgeFile, { timeout: config.busyTimeoutMs });
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${config.synchronous}`);
db.pragma(`cache_size = -${config.cacheMib * 1024}`);
db.pragma(`busy_timeout = ${config.busyTimeoutMs}`);
db.prepare('attach database ? as level').run(config.dbFile);
const lock = db.prepare('update main.access_edges_merged set id = id where 0');
const handle = db as unknown as SqliteHandle;
const state = db.prepare(
  'select (select up_to from main.access_edges_merged) as mark, (select min(seq) from level.access_edges_recent) as oldest',
);

function inTransaction<T>(fn: () => T): T {
  return db.transaction(() => {
    lock.run();
    return fn();
  }).deferred();
}

function run(req: MergeRequest): unknown {
  switch (req.op) {
    case 'merge':
      return inTransaction(() => foldAbove(handle, req.rows));
    case 'revoke':
      return inTransaction(() => applyRevokes(handle, req.tenant, req.accesses as RevokedAccess[], req.at));
    case 'close':
      db.close();
      return 0;
  }
}

parentPort?.on('message', (req: MergeRequest) => {
  let reply: MergeReply;
  const t0 = performance.now();
  try {
    const value = run(req);
    if (req.op === 'close') reply = { id: req.id, ok: true, value: 0, mark: 0, ms: 0, collect: false };
    else {
      const after = state.get() as { mark: number; oldest: number | null };
      // `collect`: merged rows wait in the level for the store to remove them (or it did already, meanwhile: one spare transaction).
      reply = {
        id: req.id,
        ok: true,
        value: value as number,
        mark: after.mark,
        ms: performance.now() - t0,
        collect: after.oldest !== null && after.oldest <= after.mark,
      };
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    reply = { id: req.id, ok: false, error: { message: e.message, code: e.code } };
  }
  parentPort?.postMessage(reply);
});


