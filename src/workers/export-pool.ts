/** The worker pool of the audit export: threads that read and encode seq ranges (export-worker.ts). */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { WorkerErrors } from './errors.js';
import { WORKER_EXEC_ARGV } from './pool.js';
import type { EncodePageRequest, EncodePageResult } from './export-protocol.js';

/** A pool running `encode-page` jobs (same contract as pool.ts `TaskPool`). */
export interface ExportPool {
  readonly threads: number;
  /** runs one page; `transferList` moves buffers (the request's output buffer) instead of copying them */
  run(task: EncodePageRequest, transferList?: ArrayBuffer[]): Promise<EncodePageResult>;
  /**
   * Runs a task of another export-like worker module (its `handle` export) on the same threads: a
   * module's streamed export (the SARIF export of findings) shares the pool, its priority and its
   * heap limits instead of starting threads of its own. `filename` is a compiled module path.
   */
  runIn<Req, Res>(filename: string, task: Req, transferList?: ArrayBuffer[]): Promise<Res>;
  close(opts?: { force?: boolean }): Promise<void>;
}

/** Options of {@link createExportPool}. */
export interface ExportPoolOptions {
  /** default: every core */
  threads?: number;
  /**
   * V8 heap limits per worker, in MB. An export thread allocates a page of strings per task and
   * keeps nothing. The nursery holds a page's garbage (a page's rows are read at once, ~0.5 MB of
   * strings, and its lines): at 4 MB scavenges ran every few hundred records and promoted the live
   * page (bench export, cef, 300k records: ~0.5 µs more CPU per record than 16 MB). 8 MB keeps most
   * of that gain; 16 MB cost ~16 MB of peak RSS at 1M records (+99.9 and +106 MiB above idle, over
   * the 100 MB budget, against +84 MiB at 8 MB in the same conditions). A page must fit in the old
   * space: 512 records of ~100 KB each would not (the page then fails and the export ends without
   * its terminator, the server stays up).
   */
  youngGenerationMb?: number;
  oldGenerationMb?: number;
}

// The compiled entry sits beside this file in dist/src/workers/.
const EXPORT_WORKER = fileURLToPath(new URL('./export-worker.js', import.meta.url));

/**
 * Starts the export pool. Built on Piscina directly rather than pool.ts `createTaskPool` because it
 * needs per-worker `resourceLimits`; the error mapping is the same.
 */
export function createExportPool(opts: ExportPoolOptions = {}): ExportPool {
  const threads = Math.max(1, opts.threads ?? availableParallelism());
  const piscina = new Piscina({
    filename: EXPORT_WORKER,
    name: 'handle',
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Infinity,
    ...WORKER_EXEC_ARGV,
    resourceLimits: { maxYoungGenerationSizeMb: opts.youngGenerationMb ?? 8, maxOldGenerationSizeMb: opts.oldGenerationMb ?? 64 },
  });
  let closed = false;
  const runOn = async <Res>(task: unknown, options: { transferList?: ArrayBuffer[]; filename?: string; name?: string }): Promise<Res> => {
    if (closed) throw WorkerErrors.poolClosed();
    try {
      return (await piscina.run(task, options)) as Res;
    } catch (err) {
      if (closed && err instanceof Error && /Terminating worker thread|cancel/i.test(err.message)) throw WorkerErrors.poolClosed(err);
      throw err;
    }
  };
  return {
    threads,
    run(task, transferList) {
      return runOn<EncodePageResult>(task, transferList ? { transferList } : {});
    },
    runIn<Req, Res>(filename: string, task: Req, transferList?: ArrayBuffer[]) {
      return runOn<Res>(task, { filename, name: 'handle', ...(transferList ? { transferList } : {}) });
    },
    async close(closeOpts) {
      closed = true;
      await piscina.close({ force: closeOpts?.force ?? false });
    },
  };
}
