/**
 * Scenario `replicas` (issue 37): `POST /v1/agents` (agent row + signed `agent.create` record) on
 * 1, 2 and 3 `svc serve` replicas of one fresh PostgreSQL database each, over HTTPS, one tenant
 * chain (or, with SVC_BENCH_REPLICAS_CHAINS=per-replica, one chain per replica). One `wrk` per
 * replica, the same total connection count split between them, all at once.
 * Reports creates/s, replica CPU per create (all replica processes, /proc/<pid>/stat) and Postgres
 * CPU per create (the backends of the run's database, found in pg_stat_activity, /proc/<pid>/stat).
 * Baseline: the 1-replica deployment measured in the same run. After each configuration the chain's
 * head must have grown by at least the acknowledged creates.
 */
import { writeFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { issueSelfSigned } from '../../src/serve/tls-generate.js';
import { createTempDatabase, pgQuery, pgTestDsn } from '../../test/helpers/pg.js';
import { cpuSeconds } from '../lib/proc.js';
import { startSvc, type SvcHandle } from '../lib/server.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';
import { runWrk, type WrkResult } from '../lib/wrk.js';

const PATH = '/v1/agents';
const ADMIN = { email: 'bench@example.test', password: 'correct horse battery staple' };

function lua(token: string, tenant: string, replica: number): string {
  return `
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"name":"bench-r${replica}-%d","kind":"coding"}', n)
  local headers = { ["Authorization"] = "Bearer ${token}", ["X-Service-Tenant"] = "${tenant}", ["Content-Type"] = "application/json" }
  return wrk.format("POST", "${PATH}", headers, body)
end`;
}

interface Config {
  replicas: number;
  createsPerSec: number;
  created: number;
  seconds: number;
  replicaCpuMsPerCreate: number;
  postgresCpuMsPerCreate: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  headGrowth: number;
  wrk: string[];
}

/** SVC_BENCH_REPLICAS_CHAINS=per-replica: each replica's wrk writes to a tenant (chain) of its own. */
function chainPerReplica(): boolean {
  const v = process.env['SVC_BENCH_REPLICAS_CHAINS'] ?? 'one';
  if (v !== 'one' && v !== 'per-replica') throw new Error(`SVC_BENCH_REPLICAS_CHAINS must be one or per-replica, got ${JSON.stringify(v)}`);
  return v === 'per-replica';
}

async function measure(ctx: BenchContext, adminDsn: string, n: number): Promise<Config> {
  const o = ctx.options;
  const dir = join(ctx.tmpDir, `deploy-${n}`);
  await mkdir(dir, { recursive: true });
  const db = await createTempDatabase(adminDsn);
  const keyFile = join(dir, 'audit-key.pem');
  writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  // One secrets key for the deployment too (docs/scale-out.md): a replica with its own refuses to start.
  const secretsKeyFile = join(dir, 'secrets.key');
  writeFileSync(secretsKeyFile, randomBytes(32), { mode: 0o600 });
  const tls = await issueSelfSigned({ sans: { dns: ['localhost'], ips: ['127.0.0.1'] } });
  writeFileSync(join(dir, 'tls.crt'), tls.certPem);
  writeFileSync(join(dir, 'tls.key'), tls.keyPem, { mode: 0o600 });
  const dispatcher = new Agent({ connect: { ca: tls.certPem, servername: 'localhost' }, connections: 4 });
  const replicas: SvcHandle[] = [];
  try {
    for (let i = 0; i < n; i++) {
      ctx.log(`${n} replica(s): starting replica ${i + 1}`);
      replicas.push(
        await startSvc({
          repoRoot: ctx.repoRoot,
          dataDir: join(dir, `r${i}`),
          insecure: false,
          logFile: join(dir, `r${i}.log`),
          expectCertPem: tls.certPem,
          readyTimeoutMs: 120_000,
          env: {
            SERVICE_STORE: 'postgres',
            SERVICE_DSN: db.dsn,
            SERVICE_TLS_CERT: join(dir, 'tls.crt'),
            SERVICE_TLS_KEY: join(dir, 'tls.key'),
            SERVICE_AUDIT_KEY_FILE: keyFile,
            SERVICE_SECRETS_KEY_FILE: secretsKeyFile,
            SERVICE_RATE_LIMIT_RPS: '0',
            ...(o.accessLog ? {} : { SERVICE_ACCESS_LOG: 'false' }),
          },
        }),
      );
    }
    type Method = 'GET' | 'POST';
    const call = async (r: SvcHandle, method: Method, path: string, body?: unknown, token?: string, tenant?: string): Promise<any> => {
      const res = await request(`${r.url}${path}`, {
        method,
        dispatcher,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(tenant ? { 'x-service-tenant': tenant } : {}),
        },
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };
    const first = replicas[0] as SvcHandle;
    const logs = await Promise.all(replicas.map((r) => readFile(r.logFile, 'utf8')));
    const setupToken = logs.map((l) => /svcst_[A-Z2-7]{52}/.exec(l)?.[0]).find((t) => t !== undefined);
    if (!setupToken) throw new Error('no replica printed a setup token');
    const org = await call(first, 'POST', '/v1/setup', { token: setupToken, ...ADMIN, organization: 'Bench' });
    const tenant = String(org.organization.id);
    const session = await call(first, 'POST', '/v1/auth/login', ADMIN);
    const token = String(session.token);
    // One chain for all replicas (the default), or each replica's load on a tenant chain of its own.
    const tenants = [tenant];
    if (chainPerReplica()) {
      for (let i = 1; i < n; i++) tenants.push(String((await call(first, 'POST', '/v1/system/orgs', { name: `Bench ${i}` }, token)).id));
    }
    const headOf = async (t: string) => Number((await call(first, 'GET', '/v1/audit?limit=1', undefined, token, t)).head_seq);
    const heads = async () => (await Promise.all(tenants.map(headOf))).reduce((a, b) => a + b, 0);
    const perReplica = Math.max(1, Math.floor(o.connections / n));
    const load = (seconds: number) =>
      Promise.all(
        replicas.map((r, i) =>
          runWrk({
            url: `${r.url}${PATH}`,
            threads: 1,
            connections: perReplica,
            durationS: seconds,
            scriptDir: dir,
            scriptName: `r${i}.lua`,
            lua: lua(token, tenants[i % tenants.length] as string, i),
          }),
        ),
      );
    if (o.warmup > 0) {
      ctx.log(`${n} replica(s): warm-up ${o.warmup}s`);
      await load(o.warmup);
    }
    const backends = async () =>
      (await pgQuery<{ pid: number }>(adminDsn, 'select pid from pg_stat_activity where datname = $1', [db.name])).map((r) =>
        Number(r.pid),
      );
    const cpu = (pids: number[]) => new Map(pids.map((p) => [p, cpuSeconds(p) ?? 0]));
    const head0 = await heads();
    const pg0 = cpu(await backends());
    const svc0 = cpu(replicas.map((r) => r.pid));
    ctx.log(`${n} replica(s): measuring ${o.duration}s, ${perReplica} connections per replica`);
    const started = process.hrtime.bigint();
    const results: WrkResult[] = await load(o.duration);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const svc1 = cpu(replicas.map((r) => r.pid));
    const pg1 = cpu(await backends());
    const grown = (await heads()) - head0 - tenants.length;
    const delta = (a: Map<number, number>, b: Map<number, number>) => [...b].reduce((s, [pid, v]) => s + (v - (a.get(pid) ?? 0)), 0);
    const created = results.reduce((s, r) => s + r.exact.requests - r.non2xx3xx, 0);
    if (grown < created) {
      throw new Error(`${n} replica(s): the chain heads grew by ${grown}, fewer than the ${created} acknowledged creates`);
    }
    const durationS = Math.max(...results.map((r) => r.exact.durationS));
    return {
      replicas: n,
      createsPerSec: created / durationS,
      created,
      seconds,
      replicaCpuMsPerCreate: (delta(svc0, svc1) * 1000) / created,
      postgresCpuMsPerCreate: (delta(pg0, pg1) * 1000) / created,
      p50Ms: Math.max(...results.map((r) => r.exact.p50Ms)),
      p99Ms: Math.max(...results.map((r) => r.exact.p99Ms)),
      errors: results.reduce((s, r) => s + r.non2xx3xx + r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout, 0),
      headGrowth: grown,
      wrk: results.map((r) => r.command.join(' ')),
    };
  } finally {
    await dispatcher.close();
    await Promise.all(replicas.map((r) => r.stop()));
    await db.drop();
  }
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const o = ctx.options;
  if (o.insecure || o.baselinesOnly) {
    throw new Error('the replicas scenario measures svc itself over HTTPS: --insecure and --baselines-only do not apply');
  }
  const pg = await pgTestDsn();
  if (pg.dsn === undefined) throw new Error(`the replicas scenario needs PostgreSQL: ${pg.skip}`);
  const configs: Config[] = [];
  for (const n of [1, 2, 3]) configs.push(await measure(ctx, pg.dsn, n));
  const m = (c: Config): Measurement => ({
    target: `${c.replicas} replica${c.replicas > 1 ? 's' : ''}`,
    path: `POST ${PATH}`,
    requestsPerSec: Number(c.createsPerSec.toFixed(1)),
    p50Ms: c.p50Ms,
    p99Ms: c.p99Ms,
    detail: { ...c, aggregate: 'one run; latency: the worst replica' },
  });
  const base = configs[0] as Config;
  const ratios: Ratio[] = configs.slice(1).map((c) => ({
    name: `${c.replicas}-replicas/1-replica`,
    path: `POST ${PATH}`,
    requestsPerSec: Number((c.createsPerSec / base.createsPerSec).toFixed(3)),
    p50: c.p50Ms / base.p50Ms,
    p99: c.p99Ms / base.p99Ms,
  }));
  const x = (a: number, b: number) => (a / b).toFixed(2);
  const notes = configs.map(
    (c) =>
      `${c.replicas} replica(s): ${c.createsPerSec.toFixed(0)} creates/s, ` +
      `replica CPU ${c.replicaCpuMsPerCreate.toFixed(2)} ms/create ` +
      `(×${x(c.replicaCpuMsPerCreate, base.replicaCpuMsPerCreate)} of 1 replica), ` +
      `Postgres backends ${c.postgresCpuMsPerCreate.toFixed(2)} ms/create ` +
      `(×${x(c.postgresCpuMsPerCreate, base.postgresCpuMsPerCreate)}), ` +
      `${c.errors} errors, head grew ${c.headGrowth} for ${c.created} creates`,
  );
  notes.push('every process (replicas, Postgres, wrk) shares this machine’s cores: more replicas add contention, not capacity');
  return {
    raw: configs.slice(1).map(m),
    baselines: [m(base)],
    ratios,
    subject: {
      store: 'postgres',
      tenant_chains: chainPerReplica() ? 'one per replica' : 'one for all replicas',
      connections_total: o.connections,
      rate_limit: 'off',
      configurations: configs.map((c) => ({
        replicas: c.replicas,
        creates_per_s: c.createsPerSec,
        replica_cpu_ms_per_create: c.replicaCpuMsPerCreate,
        postgres_cpu_ms_per_create: c.postgresCpuMsPerCreate,
      })),
    },
    notes,
  };
}

export const scenario: Scenario = {
  name: 'replicas',
  description:
    'POST /v1/agents on 1, 2 and 3 svc serve replicas of one PostgreSQL database: creates/s and replica/Postgres CPU per create, ' +
    'vs 1 replica in the same run',
  run,
};
