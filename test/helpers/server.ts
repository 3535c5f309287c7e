/**
 * Start the real `svc serve` binary on ephemeral loopback ports with a temporary data directory,
 * the way a user runs it, and talk to it over HTTPS (ARCHITECTURE.md: integration tests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const SVC_BIN = path.join(REPO_ROOT, 'bin', 'svc.js');

export interface LogLine {
  level: string;
  msg: string;
  [k: string]: unknown;
}

export interface TestServer {
  url: string;
  port: number;
  grpcPort: number;
  dataDir: string;
  certPem?: string;
  pinSha256?: string;
  fingerprintSha256?: string;
  child: ChildProcess;
  stdout(): string;
  logs(): LogLine[];
  /** an undici dispatcher trusting the server's certificate */
  dispatcher: Agent;
  /** send a signal and wait for the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  args?: string[];
  /** the launcher to run instead of bin/svc.js (a test module's server with its extra manifest) */
  bin?: string;
  env?: Record<string, string>;
  dataDir?: string;
  insecure?: boolean;
  timeoutMs?: number;
}

/** Spawn `svc serve` and resolve once both listeners are up. */
export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'svc-test-'));
  const ownDir = opts.dataDir === undefined;
  const args = [
    opts.bin ?? SVC_BIN,
    'serve',
    '--data-dir',
    dataDir,
    '--listen',
    '127.0.0.1:0',
    '--grpc-listen',
    '127.0.0.1:0',
    ...(opts.insecure ? ['--insecure'] : []),
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, SERVICE_LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const lines: LogLine[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    let i: number;
    while ((i = err.indexOf('\n')) >= 0) {
      const line = err.slice(0, i);
      err = err.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        lines.push({ level: 'raw', msg: line });
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  while (!lines.some((l) => l.msg === 'grpc listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`svc serve did not start (exit ${child.exitCode}):\n${lines.map((l) => JSON.stringify(l)).join('\n')}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const http = lines.find((l) => l.msg === 'http listening') as LogLine;
  const grpc = lines.find((l) => l.msg === 'grpc listening') as LogLine;
  const tls = lines.find((l) => l.msg === 'tls certificate');
  const certPem = tls ? readFileSync(String(tls.cert), 'utf8') : undefined;
  const dispatcher = new Agent({ connect: certPem ? { ca: certPem } : {} });
  return {
    url: String(http.url),
    port: Number(http.port),
    grpcPort: Number(grpc.port),
    dataDir,
    certPem,
    pinSha256: tls ? String(tls.pin_sha256) : undefined,
    fingerprintSha256: tls ? String(tls.fingerprint_sha256) : undefined,
    child,
    stdout: () => out,
    logs: () => lines,
    dispatcher,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      const code = await exited;
      await dispatcher.close();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Run `svc serve` expecting it to refuse: resolves with exit code and output. */
export function runServeExpectingExit(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, 'serve', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc serve ${args.join(' ')} did not exit within ${timeoutMs} ms; stderr:\n${stderr}`));
    }, timeoutMs);
    // 'close' (not 'exit'): stdout and stderr are fully read by then.
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/** One HTTPS request against a test server; returns status, headers and text. */
export async function call(
  server: TestServer,
  method: string,
  pathAndQuery: string,
  init: { body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; json: () => any }> {
  const res = await request(`${server.url}${pathAndQuery}`, {
    method: method as 'GET',
    body: init.body,
    headers: init.headers,
    dispatcher: server.dispatcher,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

export function tempDir(prefix = 'svc-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** Redeem the setup token the server printed on stdout, then log in: the bootstrap every e2e test needs. */
export async function setupAndLogin(
  server: TestServer,
  admin: { email: string; password: string },
  organization = 'Acme',
): Promise<{ tenant: string; token: string }> {
  const setupToken = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0];
  if (!setupToken) throw new Error(`no setup token on stdout: ${server.stdout()}`);
  const json = { 'content-type': 'application/json' };
  const setup = await call(server, 'POST', '/v1/setup', {
    body: JSON.stringify({ token: setupToken, ...admin, organization }),
    headers: json,
  });
  if (setup.status !== 201) throw new Error(`setup answered ${setup.status}: ${setup.text}`);
  const login = await call(server, 'POST', '/v1/auth/login', { body: JSON.stringify(admin), headers: json });
  if (login.status !== 200) throw new Error(`login answered ${login.status}: ${login.text}`);
  return { tenant: setup.json().organization.id, token: login.json().token };
}
