/**
 * Export-thread entry of the SARIF export (run on the audit export's pool, export-pool.ts `runIn`).
 * The thread drops below the main thread's priority first and only then loads the reader and the
 * encoder (sarif-reader.ts): a dynamic import, so even the module loading of a cold thread never
 * competes with the requests the main thread answers.
 */
import { lowerExportThreadPriority } from '../../workers/thread-priority.js';
import type { CountResult, PageResult } from './sarif-pages.js';
import type { SarifTask } from './sarif-reader.js';

export type { SarifTask } from './sarif-reader.js';

lowerExportThreadPriority();
const work = import('./sarif-reader.js');

/** The handler the pool calls. */
export async function handle(task: SarifTask): Promise<CountResult | PageResult> {
  return (await work).runSarifTask(task);
}
