/** Figures of a process from /proc (Linux): CPU time used so far and resident memory. */
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system, every thread) a process has used so far; null off Linux. */
export function cpuSeconds(pid: number): number | null {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat, counted after the parenthesised command name.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
