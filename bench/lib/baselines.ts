/**
 * Reference servers measured in the same run as svc: a bare uWS handler and a bare node:https
 * handler, same certificate, each in its own process (bench/lib/baseline-child.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BaselineConfig, BaselineRoute } from './baseline-child.js';
import { firstJsonLine, stopChild, track } from './child.js';

export interface BaselineHandle {
  kind: 'uws' | 'node';
  /** what served the requests: `uws-native`, `node:https`, `node:http` */
  engine: string;
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export interface BaselineOptions {
  /** omit both for plain HTTP */
  certPath?: string;
  keyPath?: string;
  routes?: Record<string, BaselineRoute>;
}

const CHILD = fileURLToPath(new URL('./baseline-child.js', import.meta.url));

/** Start one baseline server in a child process and wait until it listens. */
export async function startBaseline(kind: 'uws' | 'node', opts: BaselineOptions): Promise<BaselineHandle> {
  const cfg: BaselineConfig = { kind, routes: opts.routes ?? {} };
  if (opts.certPath && opts.keyPath) {
    cfg.certPath = opts.certPath;
    cfg.keyPath = opts.keyPath;
  }
  const child: ChildProcess = track(spawn(process.execPath, [CHILD, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let line: Record<string, unknown>;
  try {
    line = await firstJsonLine(child, 15_000, `${kind} baseline`);
  } catch (err) {
    await stopChild(child, 2_000);
    throw err;
  }
  if (line.ready !== true || typeof line.port !== 'number') {
    await stopChild(child, 2_000);
    throw new Error(`${kind} baseline refused to start: ${String(line.error ?? JSON.stringify(line))}`);
  }
  // Keep draining the pipes so a chatty child can never block on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  const scheme = cfg.certPath ? 'https' : 'http';
  return {
    kind,
    engine: String(line.engine),
    url: `${scheme}://127.0.0.1:${line.port}`,
    port: line.port,
    pid: child.pid ?? -1,
    stop: async () => {
      await stopChild(child, 5_000);
    },
  };
}
