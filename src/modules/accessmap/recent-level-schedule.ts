/** When the service folds the recent level: merges on the worker, in the background, when the writer idles, and before every read. */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle, Store } from '../../store/store-types.js';
import { mergeThread, type MergeThread } from './merge-thread.js';
import type { RevokedAccess } from './model.js';
import { statements, markOf, collectMerged, applyRevokes } from './recent-level-ops.js';

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
  if (thread === undefined || store.sqlite === undefined) return undefined;
  const wasBusy = thread.busy;
  const running = thread.background();
  if (wasBusy) return running.then(() => undefined);
  return running.then(async ({ collect }) => void (collect ? await store.sqlite?.transaction(collectMerged) : undefined));
}

/**
 * Keeps the level short while ingest leaves the writer gaps: once `SLICE_ROWS` rows wait and the
 * writer has been idle for `IDLE_MS` (SqliteWriter.whenIdle), a merge starts on the worker
 * ({@link mergeInBackground}). Under back-to-back ingest the writer is never idle and the level
 * grows to `SERVICE_ACCESSMAP_MERGE_ROWS`, where ingest starts the merge itself (edge-store.ts).
 */
export function foldWhenIdle(store: Store, waiting: number): void {
  if (waiting < SLICE_ROWS || store.sqlite === undefined) return;
  store.sqlite.whenIdle('accessmap.recent-level', IDLE_MS, () => {
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
  if (thread === undefined || store.sqlite === undefined) return 0;
  const { mark, collect } = await thread.call({ op: 'merge' });
  // A read with nothing merged to remove takes no transaction of the writer's (it would queue behind ingest's).
  if (collect) await store.sqlite.transaction(collectMerged);
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
        const db = store.sqlite?.handle(tx);
        if (db !== undefined && markOf(statements(db)) < need) throw new StaleEdges(`edge file snapshot older than mark ${need}`);
        return fn(tx);
      });
    } catch (err) {
      if (!(err instanceof StaleEdges) || attempt >= 20) throw err;
    }
  }
}

/**
 * A merge on the worker of up to `rows` waiting rows (all by default), whose rows stay in the level until the next transaction that removes
 * them; for tests and benches. Returns the rows folded.
 */
export async function mergeOnWorker(store: Store, rows?: number): Promise<number> {
  const thread = mergeThread(store);
  if (thread === undefined) return 0;
  return (await thread.call(rows === undefined ? { op: 'merge' } : { op: 'merge', rows })).value;
}

/** Applies revokes on the worker ({@link applyRevokes}), then removes the merged rows from the level. Returns the edges changed. */
export async function revokeOnWorker(store: Store, tenant: string, accesses: RevokedAccess[], at: string): Promise<number> {
  const thread = mergeThread(store) as MergeThread;
  const { value, collect } = await thread.call({ op: 'revoke', tenant, accesses, at });
  if (collect) await store.sqlite?.transaction(collectMerged);
  return value;
}

