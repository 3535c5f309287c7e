/** Spawning and stopping the server processes a scenario measures. */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

const live = new Set<ChildProcess>();

/** Remember a child so an interrupted run can still stop it (see killTracked). */
export function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** SIGKILL every tracked child still running: last resort when the harness itself is interrupted. */
export function killTracked(): void {
  for (const child of live) child.kill('SIGKILL');
}

/** Stop a child: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    const [code] = await exited;
    return code;
  } finally {
    clearTimeout(timer);
  }
}

/** Resolve with the first stdout line that parses as JSON; reject on exit or timeout first. */
export function firstJsonLine(child: ChildProcess, timeoutMs: number, what: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let stderr = '';
    const done = (fn: () => void): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      fn();
    };
    const onData = (chunk: Buffer): void => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        try {
          const parsed = JSON.parse(line) as unknown;
          if (parsed && typeof parsed === 'object') return done(() => resolve(parsed as Record<string, unknown>));
        } catch {
          // not a JSON line: keep reading
        }
      }
    };
    const onExit = (code: number | null): void =>
      done(() => reject(new Error(`${what} exited (code ${code}) before it was ready\n${stderr}`)));
    const timer = setTimeout(() => done(() => reject(new Error(`${what} not ready after ${timeoutMs} ms\n${stderr}`))), timeoutMs);
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-4000);
    });
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}
