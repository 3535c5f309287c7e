/**
 * The store's side of the merge worker (merge-worker.ts): one worker thread per SQLite store,
 * started on the first merge, stopped when the store closes (after the merge it is running).
 * Requests run one at a time, in the order they were made; each answers with its value and the
 * edge file's mark after it.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { EDGE_FILE_NAME } from './sqlite-edge-file.js';
import type { SqliteFiles, SqliteWriter, Store } from '../../store/store-types.js';
import type { RevokedAccess } from './model.js';

/** What the worker opens: the edge file beside svc.db, svc.db (attached to read the recent level), and the store's settings. */
export interface MergeWorkerData {
  edgeFile: string;
  dbFile: string;
  synchronous: SqliteFiles['synchronous'];
  cacheMib: number;
  busyTimeoutMs: number;
}

export type MergeRequest =
  | { id: number; op: 'merge'; rows?: number }
  | { id: number; op: 'revoke'; tenant: string; accesses: RevokedAccess[]; at: string }
  | { id: number; op: 'close' };

export type MergeReply =
  | { id: number; ok: true; value: number; mark: number; ms: number; collect: boolean }
  | { id: number; ok: false; error: { message: string; code?: string } };

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Call = WithoutId<MergeRequest>;

/**
 * A worker's answer to one request: the rows it folded (or edges a revoke changed), the mark after it, and whether merged rows wait in the
 * level to be removed.
 */
export interface MergeAnswer {
  value: number;
  mark: number;
  collect: boolean;
}

export class MergeThread {
  #worker: Worker | undefined;
  #next = 1;
  readonly #pending = new Map<number, { resolve: (a: MergeAnswer) => void; reject: (e: Error) => void }>();
  #closed = false;
  #background: Promise<MergeAnswer> | undefined;
  /** What the worker has done: merges (and revokes) that folded rows, the rows, and the time they took on the worker. */
  readonly stats = { merges: 0, rows: 0, ms: 0 };

  constructor(private readonly config: MergeWorkerData) {}

  #start(): Worker {
    const worker = new Worker(new URL('./merge-worker.js', import.meta.url), { workerData: this.config });
    worker.unref();
    worker.on('message', (r: MergeReply) => {
      const p = this.#pending.get(r.id);
      if (p === undefined) return;
      this.#pending.delete(r.id);
      if (r.ok && r.value > 0) {
        this.stats.merges++;
        this.stats.rows += r.value;
        this.stats.ms += r.ms;
      }
      if (r.ok) p.resolve({ value: r.value, mark: r.mark, collect: r.collect });
      else p.reject(Object.assign(new Error(r.error.message), r.error.code === undefined ? {} : { code: r.error.code }));
    });
    // A worker that dies (an error outside a request, or the thread's own exit) fails what waits on it; the next request starts another.
    const fail = (err: Error): void => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const [id, p] of this.#pending) {
        this.#pending.delete(id);
        p.reject(err);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`accessmap merge worker exited (code ${code})`)));
    return worker;
  }

  /** Sends one request and waits for its answer. */
  call(req: Call): Promise<MergeAnswer> {
    if (this.#closed) return Promise.reject(new Error('accessmap merge worker: the store is closed'));
    this.#worker ??= this.#start();
    const id = this.#next++;
    return new Promise<MergeAnswer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      (this.#worker as Worker).postMessage({ ...req, id } as MergeRequest);
    });
  }

  /** A merge of everything committed, not awaited by the caller; one at a time (the running one is returned while it runs). */
  background(): Promise<MergeAnswer> {
    this.#background ??= this.call({ op: 'merge' }).finally(() => (this.#background = undefined));
    return this.#background;
  }

  /** The running worker thread, if one has started (for diagnostics and tests). */
  get thread(): Worker | undefined {
    return this.#worker;
  }

  /** Whether a background merge is running. */
  get busy(): boolean {
    return this.#background !== undefined;
  }

  /** Lets the requests sent so far finish, closes the worker's connection, then stops the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const worker = this.#worker;
    if (worker !== undefined) {
      await this.call({ op: 'close' }).catch(() => undefined);
      this.#closed = true;
      await worker.terminate();
    }
    this.#closed = true;
  }
}

// Keyed by the store's writer capability, which every view of the store (`Object.create`) shares.
const threads = new WeakMap<SqliteWriter, MergeThread>();

/** The merge thread of a SQLite store, whose edges live in the edge file; undefined elsewhere (Postgres). */
export function mergeThread(store: Store): MergeThread | undefined {
  const sqlite = store.sqlite;
  if (sqlite === undefined) return undefined;
  let t = threads.get(sqlite);
  if (t === undefined) {
    const { dataDir, dbFile, synchronous, cacheMib, busyTimeoutMs } = sqlite.files;
    const thread = new MergeThread({ edgeFile: join(dataDir, EDGE_FILE_NAME), dbFile, synchronous, cacheMib, busyTimeoutMs });
    threads.set(sqlite, thread);
    sqlite.onClose(() => thread.close());
    t = thread;
  }
  return t;
}
