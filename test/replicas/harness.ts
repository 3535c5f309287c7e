/**
 * Several real `svc serve` processes on one fresh PostgreSQL database, the way an operator runs
 * replicas behind a load balancer (docs/scale-out.md): one shared audit signing key file
 * (`SERVICE_AUDIT_KEY_FILE`), one shared secrets key file (`SERVICE_SECRETS_KEY_FILE`), one shared
 * TLS certificate (`--tls-cert`/`--tls-key`), a data directory of its own per replica.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueSelfSigned } from '../../src/serve/tls-generate.js';
import { createTempDatabase, pgTestDsn } from '../helpers/pg.js';
import { call, startServer, type StartOptions, type TestServer } from '../helpers/server.js';

export const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

/** What replicas share: the database, the audit key file, the TLS pair. */
export interface Deployment {
  dsn: string;
  dir: string;
  keyFile: string;
  /** the secrets (sealing) key file, 32 random bytes */
  secretsKeyFile: string;
  certFile: string;
  tlsKeyFile: string;
  replicas: TestServer[];
  /** start one more replica on the deployment (its own data directory) */
  start(extra?: StartOptions): Promise<TestServer>;
  stop(): Promise<void>;
}

/** Why the replica tests cannot run here, or undefined. */
export async function replicaSkip(): Promise<string | undefined> {
  return (await pgTestDsn()).skip;
}

/** A PKCS#8 Ed25519 private key written with mode 0600. */
export function writeAuditKey(file: string): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** A secrets (sealing) key: 32 random bytes, mode 0600. */
export function writeSecretsKey(file: string): string {
  writeFileSync(file, randomBytes(32), { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** A fresh database and shared key material; `n` replicas started one after another (rate limit off unless `opts.env` sets it). */
export async function deploy(n: number, opts: { env?: Record<string, string> } = {}): Promise<Deployment> {
  const target = await pgTestDsn();
  if (target.dsn === undefined) throw new Error(target.skip);
  const db = await createTempDatabase(target.dsn);
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-replicas-'));
  const keyFile = writeAuditKey(path.join(dir, 'audit-key.pem'));
  const secretsKeyFile = writeSecretsKey(path.join(dir, 'secrets.key'));
  const tls = await issueSelfSigned({ sans: { dns: ['localhost'], ips: ['127.0.0.1'] } });
  const certFile = path.join(dir, 'tls.crt');
  const tlsKeyFile = path.join(dir, 'tls.key');
  writeFileSync(certFile, tls.certPem);
  writeFileSync(tlsKeyFile, tls.keyPem, { mode: 0o600 });
  const replicas: TestServer[] = [];
  const dep: Deployment = {
    dsn: db.dsn,
    dir,
    keyFile,
    secretsKeyFile,
    certFile,
    tlsKeyFile,
    replicas,
    async start(extra = {}) {
      const server = await startServer({
        // A shared 2-core machine under other load can take long to migrate a fresh database.
        timeoutMs: 90_000,
        ...extra,
        args: ['--store', 'postgres', '--dsn', db.dsn, '--tls-cert', certFile, '--tls-key', tlsKeyFile, ...(extra.args ?? [])],
        env: {
          SERVICE_AUDIT_KEY_FILE: keyFile,
          SERVICE_SECRETS_KEY_FILE: secretsKeyFile,
          SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0',
          SERVICE_RATE_LIMIT_RPS: '0',
          ...opts.env,
          ...extra.env,
        },
      });
      replicas.push(server);
      return server;
    },
    async stop() {
      await Promise.all(replicas.map((r) => r.stop('SIGKILL').catch(() => undefined)));
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (let i = 0; i < n; i++) await dep.start();
  } catch (err) {
    await dep.stop();
    throw err;
  }
  return dep;
}

/** A JSON request to one replica. */
export function rest(server: TestServer, method: string, p: string, init: { body?: unknown; token?: string; tenant?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.token) headers['authorization'] = `Bearer ${init.token}`;
  if (init.tenant) headers['x-service-tenant'] = init.tenant;
  return call(server, method, p, {
    headers,
    ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  });
}

/** Redeem the setup token one of the replicas printed (through `via`), log in; the session and tenant. */
export async function setup(
  dep: Deployment,
  via: TestServer = dep.replicas[0] as TestServer,
): Promise<{ session: string; tenant: string }> {
  const token = dep.replicas.map((r) => /svcst_[A-Z2-7]{52}/.exec(r.stdout())?.[0]).find((t) => t !== undefined);
  assert.ok(token, `no setup token printed by any replica: ${dep.replicas.map((r) => r.stdout()).join('\n---\n')}`);
  const s = await rest(via, 'POST', '/v1/setup', { body: { token, ...ADMIN, organization: 'Acme' } });
  assert.equal(s.status, 201, s.text);
  const login = await rest(via, 'POST', '/v1/auth/login', { body: ADMIN });
  assert.equal(login.status, 200, login.text);
  return { session: login.json().token, tenant: s.json().organization.id };
}

/** Every record of one chain through `server`'s API (seq order). */
export async function chain(
  server: TestServer,
  token: string,
  tenant: string,
): Promise<Array<{ seq: number; action: string; key_id: string; target_id: string }>> {
  const out: Array<{ seq: number; action: string; key_id: string; target_id: string }> = [];
  let from = 1;
  for (;;) {
    const page = await rest(server, 'GET', `/v1/audit?from=${from}&limit=1000`, { token, tenant });
    assert.equal(page.status, 200, page.text);
    const body = page.json();
    out.push(...body.items);
    if (!body.has_more) return out;
    from = Number(body.cursor);
  }
}

/** `GET /v1/audit/verify` on every replica: each must answer ok. */
export async function assertVerifiesEverywhere(dep: Deployment, token: string, tenant: string): Promise<void> {
  for (const [i, r] of dep.replicas.entries()) {
    if (r.child.exitCode !== null || r.child.signalCode !== null) continue;
    const v = await rest(r, 'GET', '/v1/audit/verify', { token, tenant });
    assert.equal(v.status, 200, `replica ${i}: ${v.text}`);
    assert.equal(v.json().ok, true, `replica ${i}: ${v.text}`);
  }
}
