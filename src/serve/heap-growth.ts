/**
 * How far V8 lets the heap grow between full collections (docs/perf/eventing-memory.md). After a
 * full GC V8 sets the next limit at up to 4 × what survived when collecting is cheap, so a server
 * that promotes short-lived objects under load (a drained webhook backlog: claims, requests,
 * outcome promises) sits up to three times its live heap above it. `svc serve` asks for 1.5 ×
 * instead: a full GC comes sooner (each is incremental, mostly concurrent) and the slack halves.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap may grow to (1 + this/100) × what the last full collection left. */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = '--heap-growing-percent';

/** Sets V8's heap growing factor for this process, unless the node command line already chose one. */
export function limitHeapGrowth(percent: number = HEAP_GROWING_PERCENT, execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => a.startsWith(FLAG) || a.startsWith('--heap_growing_percent'))) return false;
  setFlagsFromString(`${FLAG}=${percent}`);
  return true;
}
