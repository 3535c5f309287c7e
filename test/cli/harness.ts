/**
 * Test harness of the CLI acceptance tests: run the built `svc` binary the way a user does, make a
 * throwaway self-signed certificate with the openssl CLI, and serve canned answers over real
 * `node:https` / `node:http` on 127.0.0.1 (STYLE rule 7).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file compiles to dist/test/cli/). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const SVC_BIN = join(REPO_ROOT, 'bin', 'svc.js');

/** What one `svc` run produced. */
export type SvcRun = { code: number | null; stdout: string; stderr: string; elapsedMs: number };

/**
 * Runs `node bin/svc.js ...args` with a scrubbed environment: no inherited `SERVICE_*` variables
 * and `SERVICE_CONFIG` pointing into an empty temp dir unless the test passes its own.
 */
export function runSvc(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; timeoutMs?: number; bin?: string } = {},
): Promise<SvcRun> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SERVICE_') && value !== undefined) env[key] = value;
  env.SERVICE_CONFIG = join(tempDir('svc-cli-noconf-'), 'config.yaml');
  Object.assign(env, { NO_COLOR: '1' }, options.env);
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [options.bin ?? SVC_BIN, ...args], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`svc ${args.join(' ')} did not exit within ${options.timeoutMs ?? 30_000} ms\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, elapsedMs: Date.now() - started });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** Parses the single JSON document `-o json` writes on stdout. */
export function jsonOut(run: SvcRun): any {
  const lines = run.stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected one JSON line on stdout, got ${lines.length}:\n${run.stdout}\nstderr: ${run.stderr}`);
  return JSON.parse(lines[0] as string);
}

/** A fresh temporary directory. */
export function tempDir(prefix = 'svc-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A self-signed P-256 certificate made by the openssl CLI, with its pin computed by openssl too. */
export type TestCert = {
  dir: string;
  certPath: string;
  keyPath: string;
  certPem: string;
  keyPem: string;
  pinBase64: string;
  pinHex: string;
};

/** Generates the certificate (SANs localhost and 127.0.0.1) and its SPKI SHA-256 pin, independently of our code. */
export function makeCert(): TestCert {
  const dir = tempDir('svc-cli-cert-');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ], { stdio: 'ignore' });
  // RFC 7469 §2.4 pin: SHA-256 over the DER SubjectPublicKeyInfo, the same recipe curl documents for --pinnedpubkey.
  const spkiPem = execFileSync('openssl', ['x509', '-in', certPath, '-pubkey', '-noout']);
  const spkiDer = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: spkiPem });
  const digest = execFileSync('openssl', ['dgst', '-sha256', '-binary'], { input: spkiDer });
  return {
    dir,
    certPath,
    keyPath,
    certPem: readFileSync(certPath, 'utf8'),
    keyPem: readFileSync(keyPath, 'utf8'),
    pinBase64: digest.toString('base64'),
    pinHex: digest.toString('hex'),
  };
}

/** A canned answer. */
export type Answer = { status: number; body?: unknown; contentType?: string; delayMs?: number };

/** A request the fake server saw. */
export type SeenRequest = { method: string; url: string; headers: IncomingHttpHeaders };

/** A local server answering from a route table the test can change between runs. */
export type FakeServer = {
  url: string;
  port: number;
  routes: Map<string, Answer>;
  seen: SeenRequest[];
  /** TCP connections accepted so far (a refused request must not even connect). */
  connections(): number;
  close(): Promise<void>;
};

/** Starts a fake control plane on 127.0.0.1 (https when a certificate is given). */
export async function startFakeServer(cert?: TestCert): Promise<FakeServer> {
  const routes = new Map<string, Answer>();
  const seen: SeenRequest[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const answer = routes.get(`${req.method} ${req.url}`) ?? {
      status: 404,
      body: { error: { code: 'not_found', message: 'no such route' } },
    };
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' });
      res.end(text);
    }, answer.delayMs ?? 0);
  };
  const server: Server = cert ? createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, handler) : createHttpServer(handler);
  let connections = 0;
  server.on('connection', () => (connections += 1));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${cert ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    routes,
    seen,
    connections: () => connections,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
