/**
 * Runs a real `svc serve` for a scenario: free loopback ports, TLS by default, stderr (JSON log
 * lines) to a file, ready when /healthz answers 200. Refuses to go on when the HTTP engine is the
 * uWS package's pure-Node fallback (ARCHITECTURE.md "HTTP": benchmarks must refuse it).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopChild, track } from './child.js';
import { freePort } from './free-port.js';
import { getOnce } from './http-get.js';

export interface SvcOptions {
  repoRoot: string;
  dataDir: string;
  /** plain HTTP with `--insecure` (loopback only) */
  insecure: boolean;
  logFile: string;
  /** PEM the server is expected to serve; used to verify the handshake strictly once it is up */
  expectCertPem?: string;
  env?: NodeJS.ProcessEnv;
  readyTimeoutMs?: number;
}

export interface SvcHandle {
  url: string;
  port: number;
  grpcPort: number;
  pid: number;
  args: string[];
  /** `engine.http` from GET /v1/server-info */
  engine: string;
  version: string;
  serverInfo: Record<string, unknown>;
  /** the `msg: "http listening"` log line, when found */
  listening?: Record<string, unknown>;
  peerFingerprint256?: string;
  /** true when a strict handshake trusting only `expectCertPem` succeeded */
  tlsVerified?: boolean;
  logFile: string;
  stop(): Promise<number | null>;
}

/** Thrown when the benchmark must not run (fallback engine): the figures would be meaningless. */
export class BenchRefusal extends Error {
  override readonly name = 'BenchRefusal';
}

/** Start `node bin/svc.js serve` on free loopback ports and wait until it is healthy. */
export async function startSvc(o: SvcOptions): Promise<SvcHandle> {
  const port = await freePort();
  const grpcPort = await freePort();
  const args = [
    join(o.repoRoot, 'bin', 'svc.js'),
    'serve',
    '--data-dir',
    o.dataDir,
    '--listen',
    `127.0.0.1:${port}`,
    '--grpc-listen',
    `127.0.0.1:${grpcPort}`,
  ];
  if (o.insecure) args.push('--insecure');
  // Node flags for the server alone, e.g. SVC_BENCH_SVC_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"
  // to profile it (NODE_OPTIONS refuses --cpu-prof, and would profile the harness too).
  const nodeArgs = process.env['SVC_BENCH_SVC_NODE_ARGS']?.split(' ').filter(Boolean) ?? [];
  const fd = openSync(o.logFile, 'a');
  const child = track(
    spawn(process.execPath, [...nodeArgs, ...args], { stdio: ['ignore', fd, fd], env: { ...process.env, ...o.env }, cwd: o.repoRoot }),
  );
  closeSync(fd);
  const url = `${o.insecure ? 'http' : 'https'}://127.0.0.1:${port}`;
  const stop = (): Promise<number | null> => stopChild(child, 15_000);

  const deadline = Date.now() + (o.readyTimeoutMs ?? Number(process.env.SVC_BENCH_READY_TIMEOUT_MS ?? 30_000));
  let lastError = '';
  for (;;) {
    // Refuse as soon as svc says it runs the fallback: it may not even serve (or start with TLS).
    if (await logMentionsFallback(o.logFile)) {
      await stop();
      throw new BenchRefusal(
        `refusing to benchmark: svc reports the uws-fallback HTTP engine (the native uWebSockets.js binary did not load); see ${o.logFile}`,
      );
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`svc serve exited (code ${child.exitCode ?? child.signalCode}) before /healthz answered:\n${await tail(o.logFile)}`);
    }
    try {
      const r = await getOnce(`${url}/healthz`, { timeoutMs: 1_000 });
      if (r.status === 200) break;
      lastError = `status ${r.status}`;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `svc serve: /healthz did not answer 200 within ` +
          `${o.readyTimeoutMs ?? Number(process.env.SVC_BENCH_READY_TIMEOUT_MS ?? 30_000)} ms (${lastError}):\n${await tail(o.logFile)}`,
      );
    }
    await sleep(100);
  }

  try {
    const info = await getOnce(`${url}/v1/server-info`);
    if (info.status !== 200) throw new Error(`GET /v1/server-info answered ${info.status}: ${info.body.slice(0, 300)}`);
    const serverInfo = JSON.parse(info.body) as Record<string, unknown>;
    const engine = String((serverInfo.engine as { http?: unknown } | undefined)?.http ?? 'unknown');
    if (engine !== 'uws-native') {
      throw new BenchRefusal(
        engine === 'uws-fallback'
          ? 'refusing to benchmark: svc runs on the uWebSockets.js pure-Node fallback engine (its native binary did not load), so the ' +
              'figures would not describe the product'
          : `refusing to benchmark: /v1/server-info does not report the native engine (engine.http = ${JSON.stringify(engine)})`,
      );
    }
    const handle: SvcHandle = {
      url,
      port,
      grpcPort,
      pid: child.pid ?? -1,
      args: ['node', ...args.slice(0)].map((a) => a.replace(o.repoRoot + '/', '')),
      engine,
      version: String(serverInfo.version ?? 'unknown'),
      serverInfo,
      logFile: o.logFile,
      stop,
    };
    const listening = await findLogLine(o.logFile, 'http listening');
    if (listening) {
      handle.listening = listening;
      // The log line and /v1/server-info must agree; either one reporting the fallback is enough to refuse.
      if (listening.engine !== undefined && listening.engine !== 'uws-native') {
        throw new BenchRefusal(`refusing to benchmark: svc logged "http listening" with engine ${JSON.stringify(listening.engine)}`);
      }
    }
    if (!o.insecure) {
      if (info.peerFingerprint256) handle.peerFingerprint256 = info.peerFingerprint256;
      if (o.expectCertPem) {
        handle.tlsVerified = await getOnce(`${url}/healthz`, { ca: o.expectCertPem }).then(
          (r) => r.status === 200,
          () => false,
        );
      }
    }
    return handle;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** True when any JSON log line carries `engine: "uws-fallback"` (the startup and "http listening" lines do). */
async function logMentionsFallback(file: string): Promise<boolean> {
  const text = await readFile(file, 'utf8').catch(() => '');
  if (!text.includes('uws-fallback')) return false;
  return text.split('\n').some((line) => {
    try {
      return (JSON.parse(line) as { engine?: unknown }).engine === 'uws-fallback';
    } catch {
      return false;
    }
  });
}

/** The first JSON log line whose `msg` equals `msg`. */
async function findLogLine(file: string, msg: string): Promise<Record<string, unknown> | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const rec = JSON.parse(line) as Record<string, unknown>;
      if (rec.msg === msg) return rec;
    } catch {
      // not JSON
    }
  }
  return undefined;
}

async function tail(file: string, lines = 30): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').slice(-lines).join('\n');
}
