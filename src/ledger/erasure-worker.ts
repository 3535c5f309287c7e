/**
 * Export-thread entry of a ledger erasure (run on the audit export's pool, export-pool.ts `runIn`,
 * like the SARIF export): the thread drops below the main thread's priority, then loads the scan
 * (erasure-scan.ts) with a dynamic import.
 */
import { lowerExportThreadPriority } from '../workers/thread-priority.js';
import type { CheckpointResult, ErasureTask, ScanResult } from './erasure-scan.js';

lowerExportThreadPriority();
const work = import('./erasure-scan.js');

/** The handler the pool calls. */
export async function handle(task: ErasureTask): Promise<ScanResult | CheckpointResult> {
  return (await work).runErasureTask(task);
}
