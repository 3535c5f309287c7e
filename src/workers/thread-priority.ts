/**
 * Nice value of an export thread. Export threads are CPU-bound for as long as an export lasts; the
 * main thread, which answers every other request (`/healthz` p99 ≤ 10 ms during an export) and
 * writes the export itself, must get a core the moment it has work. On Linux the nice value is a
 * per-thread attribute (setpriority(2) with pid 0 is the calling thread); elsewhere it would renice
 * the whole server, so it is left alone there.
 */
import { setPriority } from 'node:os';

export const EXPORT_THREAD_NICE = 10;

/** Lowers the calling worker thread's priority (Linux only); a sandbox that forbids it changes nothing. */
export function lowerExportThreadPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(EXPORT_THREAD_NICE);
  } catch {
    // setpriority(2) forbidden: the thread keeps the default priority.
  }
}
