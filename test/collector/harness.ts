/**
 * Helpers of the collector end-to-end tests: a spawned `svc collector` (the real binary), test
 * client certificates made with openssl, and reads of the access edges and ledger records a core
 * holds for one signal source.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SVC_BIN } from '../helpers/server.js';
import type { Core } from '../grpc/harness.js';

export interface RunningCollector {
  child: ChildProcess;
  spoolDir: string;
  logs(): string;
  /** signal it and wait for the exit code (SIGKILL after 20 s) */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface CollectorSpec {
  dir: string;
  grpcPort: number;
  caFile: string;
  token: string;
  name: string;
  files: string[];
  tenant?: string;
  client?: { cert: string; key: string };
}

/** Spawn `svc collector` tailing `files`; its config, token and spool live in `dir`. */
export function startCollector(spec: CollectorSpec): RunningCollector {
  mkdirSync(spec.dir, { recursive: true });
  const config = path.join(spec.dir, 'sources.json');
  writeFileSync(
    config,
    JSON.stringify({
      name: spec.name,
      ...(spec.tenant ? { tenant: spec.tenant } : {}),
      sources: spec.files.map((f) => ({ type: 'jsonl', path: f })),
      poll_ms: 25,
      batch: { max_items: 40 },
    }),
  );
  const tokenFile = path.join(spec.dir, 'token');
  writeFileSync(tokenFile, spec.token, { mode: 0o600 });
  const spoolDir = path.join(spec.dir, 'spool');
  const args = [
    SVC_BIN,
    'collector',
    '--core-addr',
    `127.0.0.1:${spec.grpcPort}`,
    '--ca',
    spec.caFile,
    '--token-file',
    tokenFile,
    '--config',
    config,
    '--spool-dir',
    spoolDir,
  ];
  if (spec.client) args.push('--client-cert', spec.client.cert, '--client-key', spec.client.key);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SERVICE_LOG_LEVEL: 'info' } });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    spoolDir,
    logs: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** A throwaway CA and client certificates signed by it (openssl). */
export function makeClientPki(dir: string, names: string[]): { caFile: string; clients: Record<string, { cert: string; key: string }> } {
  mkdirSync(dir, { recursive: true });
  const caKey = path.join(dir, 'ca.key');
  const caFile = path.join(dir, 'ca.pem');
  const ossl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  ossl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    '2',
    '-subj',
    '/CN=svc test client CA',
  ]);
  const clients: Record<string, { cert: string; key: string }> = {};
  for (const n of names) {
    const key = path.join(dir, `${n}.key`);
    const csr = path.join(dir, `${n}.csr`);
    const cert = path.join(dir, `${n}.pem`);
    ossl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${n}`]);
    ossl(['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '2']);
    clients[n] = { cert, key };
  }
  return { caFile, clients };
}

/** Every access edge of `tenant` seen from `signal` (all pages). */
export async function edgesOf(
  core: Core,
  tenant: string,
  signal: string,
): Promise<Array<{ resource_name: string; observed_count: number }>> {
  const out: Array<{ resource_name: string; observed_count: number }> = [];
  let cursor: string | undefined;
  do {
    const res = await core.rest(
      'GET',
      `/v1/access-edges?limit=1000&signal_source=${encodeURIComponent(signal)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token: core.session, tenant },
    );
    assert.equal(res.status, 200, res.text);
    out.push(...res.json().items);
    cursor = res.json().has_more ? res.json().cursor : undefined;
  } while (cursor);
  return out;
}

/** Total observations of `signal` in `tenant`. */
export async function observed(core: Core, tenant: string, signal: string): Promise<number> {
  return (await edgesOf(core, tenant, signal)).reduce((n, e) => n + Number(e.observed_count), 0);
}

/** `ingest.batch` ledger records of a tenant from one collector: how many, and the items they account for. */
export async function ledgerBatches(
  core: Core,
  tenant: string,
  collector: string,
): Promise<{ records: number; accepted: number; ids: string[] }> {
  let from = 1;
  const out = { records: 0, accepted: 0, ids: [] as string[] };
  for (;;) {
    const res = await core.rest('GET', `/v1/audit?action=ingest.batch&limit=1000&from=${from}`, { token: core.session, tenant });
    assert.equal(res.status, 200, res.text);
    for (const r of res.json().items as Array<{ meta: string; target_id: string }>) {
      const meta = JSON.parse(r.meta);
      if (meta.collector !== collector) continue;
      out.records++;
      out.accepted += meta.accepted;
      out.ids.push(r.target_id);
    }
    if (!res.json().has_more) return out;
    from = Number(res.json().cursor);
  }
}

/** Poll `check` until it returns true or `timeoutMs` passes; returns the last value. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, stepMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** A JSON line for the tailers: one observation of `res-<i mod mod>` by `signal`. */
export function line(signal: string, i: number, mod = 25): string {
  return (
    JSON.stringify({
      origin_kind: 'identity',
      origin_ref: `sa-${signal}`,
      resource_ref: `res-${signal}-${i % mod}`,
      mode: i % 2 ? 'r' : 'rw',
      confidence: 'high',
      signal_source: signal,
      observed_at: '2026-02-01T00:00:00.000000000Z',
    }) + '\n'
  );
}
