/** The worker pool (Piscina) for CPU-heavy ledger jobs, so the main thread only does I/O and routing. */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { WorkerErrors } from './errors.js';
import type {
  LedgerRequest,
  LedgerWorkerData,
  ResultOf,
  SignBatchRequest,
  SignBatchResult,
  SigningKeyMaterial,
  VerifyChunkRequest,
  VerifyChunkResult,
  VerifyRangeRequest,
} from './protocol.js';

/** Options of a generic task pool. */
export interface TaskPoolOptions {
  /** Compiled worker module (file URL or path) exporting the handler `name`. */
  filename: string | URL;
  /** Exported handler name; default `handle`. */
  name?: string;
  /** Worker threads; default all cores. */
  threads?: number;
  /** Data given to every worker once, at start. */
  workerData?: unknown;
  /** Tasks allowed to wait for a thread; beyond it run() rejects with `queue-full`. Default unbounded. */
  maxQueue?: number;
}

/** A pool running one request type with one result type. */
export interface TaskPool<Req, Res> {
  readonly threads: number;
  /** Tasks waiting for a thread. */
  readonly queueSize: number;
  /** Run a task; rejects with a WorkerPoolError `aborted`, `pool-closed` or `queue-full`, or the task's own error. */
  run(task: Req, signal?: AbortSignal): Promise<Res>;
  /** Stop accepting tasks; with force, cancel queued ones, else let them finish. */
  close(opts?: { force?: boolean }): Promise<void>;
}

/**
 * Piscina loads a worker module with require() first. On Node 20.19+ that takes the require(esm)
 * path, which crashed V8 now and then while workers started together ("FATAL ERROR:
 * v8::Module::IsGraphAsync", seen in CI). With it off, require throws ERR_REQUIRE_ESM and Piscina
 * imports the module instead. Every Piscina pool passes these options.
 */
export const WORKER_EXEC_ARGV: { execArgv?: string[] } = process.allowedNodeEnvironmentFlags.has('--experimental-require-module')
  ? { execArgv: [...process.execArgv, '--no-experimental-require-module'] }
  : {};

/** A typed pool over any worker module. */
export function createTaskPool<Req, Res>(opts: TaskPoolOptions): TaskPool<Req, Res> {
  const threads = Math.max(1, opts.threads ?? availableParallelism());
  const filename = opts.filename instanceof URL ? fileURLToPath(opts.filename) : opts.filename;
  const piscina = new Piscina<Req, Res>({
    filename,
    name: opts.name ?? 'handle',
    minThreads: threads,
    maxThreads: threads,
    maxQueue: opts.maxQueue ?? Infinity,
    workerData: opts.workerData,
    ...WORKER_EXEC_ARGV,
    // Workers idle between batches must not be torn down and re-spawned (key loading, JIT warm-up).
    idleTimeout: Infinity,
  });
  let closed = false;
  return {
    threads,
    get queueSize() {
      return piscina.queueSize;
    },
    async run(task, signal) {
      if (closed) throw WorkerErrors.poolClosed();
      if (signal?.aborted) throw WorkerErrors.aborted(signal.reason);
      try {
        return await piscina.run(task, signal ? { signal } : {});
      } catch (err) {
        if (signal?.aborted) throw WorkerErrors.aborted(err);
        if (err instanceof Error && err.message === 'Task queue is at limit') throw WorkerErrors.queueFull(err);
        if (closed && err instanceof Error && /Terminating worker thread|cancel/i.test(err.message)) throw WorkerErrors.poolClosed(err);
        throw err;
      }
    },
    async close(closeOpts) {
      closed = true;
      await piscina.close({ force: closeOpts?.force ?? false });
    },
  };
}

/** Options of the ledger pool. */
export interface WorkerPoolOptions {
  /** Worker threads; default all cores. */
  threads?: number;
  /** Signing keys the workers may use (normally just the active key). */
  signingKeys?: SigningKeyMaterial[];
  maxQueue?: number;
}

/** The ledger's pool: sign batches and verify chunks off the main thread. */
export interface LedgerPool {
  readonly threads: number;
  signBatch(req: Omit<SignBatchRequest, 'kind'>, signal?: AbortSignal): Promise<SignBatchResult>;
  verifyChunk(req: Omit<VerifyChunkRequest, 'kind'>, signal?: AbortSignal): Promise<VerifyChunkResult>;
  /** Verify a stored seq range the worker reads itself (ledger/chain-verifier.ts). */
  verifyRange(req: Omit<VerifyRangeRequest, 'kind'>, signal?: AbortSignal): Promise<VerifyChunkResult>;
  close(opts?: { force?: boolean }): Promise<void>;
}

// The compiled entry sits beside this file in dist/src/workers/.
const LEDGER_WORKER = new URL('./ledger-worker.js', import.meta.url);

/** Start the ledger worker pool; key rotation means starting a new pool with the new key and closing this one. */
export function createWorkerPool(opts: WorkerPoolOptions = {}): LedgerPool {
  const workerData: LedgerWorkerData = { signingKeys: opts.signingKeys ?? [] };
  const poolOpts: TaskPoolOptions = { filename: LEDGER_WORKER, workerData };
  if (opts.threads !== undefined) poolOpts.threads = opts.threads;
  if (opts.maxQueue !== undefined) poolOpts.maxQueue = opts.maxQueue;
  const pool = createTaskPool<LedgerRequest, ResultOf<LedgerRequest>>(poolOpts);
  return {
    threads: pool.threads,
    signBatch: async (req, signal) => (await pool.run({ kind: 'sign-batch', ...req }, signal)) as SignBatchResult,
    verifyChunk: async (req, signal) => (await pool.run({ kind: 'verify-chunk', ...req }, signal)) as VerifyChunkResult,
    verifyRange: async (req, signal) => (await pool.run({ kind: 'verify-range', ...req }, signal)) as VerifyChunkResult,
    close: (o) => pool.close(o),
  };
}
