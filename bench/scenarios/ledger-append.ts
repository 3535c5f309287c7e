/**
 * Scenario `ledger-append` (issue 4, Performance): the append pipeline's own capacity. 64 concurrent
 * in-process appenders on one chain, SQLite (synchronous=FULL) and Postgres (if 127.0.0.1:5432
 * answers): durable signed appends/s and p50/p99 append latency; in the same run, the raw Ed25519
 * sign rates on 2 threads of node:crypto (the baseline) and of libsodium (the ledger's
 * default engine), and the ledger pool's own sign rate (batches of 512, no hashing, no I/O); and
 * the bytes each record takes in the SQLite file.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { hashBatch, signHashes } from '../../src/ledger/chain.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { LedgerPipeline } from '../../src/ledger/pipeline.js';
import type { AuditDraft } from '../../src/ledger/record.js';
import type { BusEvent } from '../../src/events/event-types.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { newId } from '../../src/store/ids.js';
import { tenantRow } from '../../test/store/store-fixtures.js';
import { openStore, type Store } from '../../src/store/store.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite/sqlite-store.js';
import { createWorkerPool, type LedgerPool } from '../../src/workers/pool.js';
import { createTempDatabase, pgTestDsn } from '../../test/helpers/pg.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';
import { rawEd25519Rate } from '../lib/raw-ed25519.js';
import { ed25519Engine } from '../../src/ledger/ed25519-engine.js';

const TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';
const APPENDERS = 64;

function draft(i: number): AuditDraft {
  return {
    actor: `user:0197${(i % 97).toString(16).padStart(4, '0')}-aaaa-7bbb-8ccc-ddddeeeeffff`,
    actor_kind: 'user',
    action: i % 3 === 0 ? 'agent.update' : 'agent.create',
    target_kind: 'agent',
    target_id: `0197aaaa-bbbb-7ccc-8ddd-${(i % 1e12).toString(16).padStart(12, '0')}`,
    meta: { name: `agent-${i}`, status: 'active' },
  };
}

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** The event a PEP decision hands the append (written to the event log in the record's commit). */
function decided(i: number): BusEvent[] {
  const data = { id: `d-${i}`, decision: 'allow', revision: 1, tool_name: 'Read', hook_event_name: 'PreToolUse', session_id: 's' };
  const subject = `pep_decision/${i}`;
  return [{ id: newId(), type: 'pep.decided', source: '/svc/governance', time: nowTimestamp(), tenant: TENANT, subject, data }];
}

/** 64 appenders for `seconds`; latency of every append; with `events`, each append carries one event. */
async function drive(
  pipeline: LedgerPipeline,
  seconds: number,
  events = false,
): Promise<{ count: number; rate: number; p50: number; p99: number; maxMs: number }> {
  const lat: number[] = [];
  let stop = false;
  let i = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      const n = i++;
      await pipeline.append(TENANT, draft(n), undefined, events ? decided(n) : undefined);
      lat.push(performance.now() - t0);
    }
  };
  const timer = setTimeout(() => (stop = true), seconds * 1000);
  await Promise.all(Array.from({ length: APPENDERS }, worker));
  clearTimeout(timer);
  const elapsed = (performance.now() - started) / 1000;
  const sorted = Float64Array.from(lat).sort();
  return {
    count: lat.length,
    rate: lat.length / elapsed,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    maxMs: sorted[sorted.length - 1] ?? 0,
  };
}

/** Raw sign rate of the pool: 2 callers keep both threads busy with batches of 512 (no I/O, no hashing). */
async function rawSignRate(pool: LedgerPool, keyId: string, seconds: number): Promise<number> {
  const hashes = Buffer.alloc(32 * 512, 7);
  let signed = 0;
  let stop = false;
  const started = performance.now();
  const caller = async (): Promise<void> => {
    let seq = 1;
    while (!stop) {
      await pool.signBatch({ keyId, tenant: TENANT, firstSeq: seq, hashes });
      seq += 512;
      signed += 512;
    }
  };
  const timer = setTimeout(() => (stop = true), seconds * 1000);
  await Promise.all(Array.from({ length: pool.threads * 2 }, caller));
  clearTimeout(timer);
  return signed / ((performance.now() - started) / 1000);
}

type Drive = Awaited<ReturnType<typeof drive>>;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function measurement(name: string, path: string, runs: Drive[]): Measurement & { extra: Record<string, number> } {
  return {
    target: `svc-ledger-${name}`,
    path,
    requestsPerSec: Math.round(median(runs.map((r) => r.rate))),
    p50Ms: Number(median(runs.map((r) => r.p50)).toFixed(3)),
    p99Ms: Number(median(runs.map((r) => r.p99)).toFixed(3)),
    detail: {
      appends: runs.reduce((n, r) => n + r.count, 0), max_ms: Number(Math.max(...runs.map((r) => r.maxMs)).toFixed(2)),
      appenders: APPENDERS, rounds: runs.length, rates: runs.map((r) => Math.round(r.rate)),
    },
    extra: {},
  };
}

/** Plain appends and appends carrying one event each (what a PEP decision writes), interleaved round by round. */
async function measureBackend(
  ctx: BenchContext,
  name: string,
  store: Store,
  pool: LedgerPool,
  keyring: Keyring,
): Promise<[Measurement, Measurement]> {
  await store.migrate();
  // The event log's rows reference their tenant.
  await store.transaction((tx) =>
    tx
      .insertInto('tenants')
      .values(tenantRow({ id: TENANT }))
      .onConflict((oc) => oc.column('id').doNothing())
      .execute(),
  );
  const pipeline = new LedgerPipeline({ store, signer: () => keyring.active, pool });
  ctx.log(`${name}: warm-up ${ctx.options.warmup} s …`);
  await drive(pipeline, ctx.options.warmup);
  const plain: Drive[] = [];
  const withEvent: Drive[] = [];
  const rounds = Math.max(1, ctx.options.rounds);
  for (let r = 1; r <= rounds; r++) {
    ctx.log(`${name} round ${r}/${rounds}: ${ctx.options.duration} s with ${APPENDERS} appenders, then with one event per append …`);
    plain.push(await drive(pipeline, ctx.options.duration));
    withEvent.push(await drive(pipeline, ctx.options.duration, true));
  }
  await pipeline.close();
  return [measurement(name, 'append', plain), measurement(name, 'append + event', withEvent)];
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const dataDir = join(ctx.tmpDir, 'ledger-data');
  const keyring = await Keyring.open({ dataDir, env: {} });
  const pool = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
  const raw: Measurement[] = [];
  const baselines: Measurement[] = [];
  const ratios: Ratio[] = [];
  const notes: string[] = [];
  const subject: Record<string, unknown> = {
    algorithm: keyring.active.algorithm,
    worker_threads: pool.threads,
    sqlite_synchronous: 'full',
  };
  try {
    // Raw sign rates first, so the figures are not lowered by leftover I/O.
    ctx.log('raw Ed25519 sign rates: node:crypto and libsodium on 2 threads, then the ledger pool …');
    const seconds = Math.max(2, ctx.options.duration);
    const nodeRate = await rawEd25519Rate('node-crypto', 'sign', 2, seconds);
    const sodiumRate = await rawEd25519Rate('libsodium', 'sign', 2, seconds);
    await rawSignRate(pool, keyring.active.keyId, 1);
    const poolRate = await rawSignRate(pool, keyring.active.keyId, seconds);
    const signRate = nodeRate;
    baselines.push({
      target: 'node-crypto-ed25519-sign',
      path: '2 threads',
      requestsPerSec: Math.round(nodeRate),
      p50Ms: 0,
      p99Ms: 0,
      detail: {},
    });
    baselines.push({
      target: 'libsodium-ed25519-sign',
      path: '2 threads',
      requestsPerSec: Math.round(sodiumRate),
      p50Ms: 0,
      p99Ms: 0,
      detail: {},
    });
    baselines.push({
      target: 'ledger-pool-sign',
      path: `${pool.threads} ` + `threads`,
      requestsPerSec: Math.round(poolRate),
      p50Ms: 0,
      p99Ms: 0,
      detail: { batch: 512, engine: ed25519Engine().name },
    });
    subject['ed25519_engine'] = ed25519Engine().name;
    // In-thread hashing cost (what the main thread does per record besides I/O).
    const drafts = Array.from({ length: 512 }, (_, i) => draft(i));
    let hashed = 0;
    const h0 = performance.now();
    while (performance.now() - h0 < 1000) {
      hashBatch(null, TENANT, drafts, keyring.active);
      hashed += 512;
    }
    subject['main_thread_hash_rate'] = Math.round(hashed / ((performance.now() - h0) / 1000));
    void signHashes;

    const sqlite = await openStore({ backend: 'sqlite', dataDir });
    try {
      const [m, e] = await measureBackend(ctx, 'sqlite', sqlite, pool, keyring);
      raw.push(m, e);
      ratios.push({
        name: 'sqlite-append/node-crypto-sign',
        path: 'append',
        requestsPerSec: Number((m.requestsPerSec / signRate).toFixed(3)),
        p50: 0,
        p99: 0,
      });
      ratios.push({
        name: 'sqlite-append/libsodium-sign',
        path: 'append',
        requestsPerSec: Number((m.requestsPerSec / sodiumRate).toFixed(3)),
        p50: 0,
        p99: 0,
      });
      ratios.push(eventRatio('sqlite', e, m));
    } finally {
      await sqlite.close();
    }
    // Bytes per record: the whole file after a checkpoint of the WAL, over the record count.
    const db = new BetterSqlite3(join(dataDir, SQLITE_FILE_NAME));
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      const pages = Number(db.pragma('page_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }));
      const n = Number((db.prepare('select count(*) as n from audit_records').get() as { n: number }).n);
      const free = Number(db.pragma('freelist_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }));
      subject['sqlite_bytes_per_record'] = Math.round((pages - free) / n);
      subject['sqlite_records'] = n;
    } finally {
      db.close();
    }

    const pg = await pgTestDsn();
    if (pg.dsn !== undefined) {
      const temp = await createTempDatabase(pg.dsn);
      const store = await openStore({ backend: 'postgres', dataDir, dsn: temp.dsn, poolSize: 8 });
      try {
        const [m, e] = await measureBackend(ctx, 'postgres', store, pool, keyring);
        raw.push(m, e);
        ratios.push({
          name: 'postgres-append/node-crypto-sign',
          path: 'append',
          requestsPerSec: Number((m.requestsPerSec / signRate).toFixed(3)),
          p50: 0,
          p99: 0,
        });
        ratios.push(eventRatio('postgres', e, m));
      } finally {
        await store.close();
        await temp.drop();
      }
    } else {
      notes.push(`postgres skipped: ${pg.skip}`);
    }
  } finally {
    await pool.close();
  }
  notes.push(
    'targets (issue 4): ≥ 30,000 appends/s on SQLite, ≥ 40% of the ' + 'raw two-core node:crypto sign rate, p99 ≤ 10 ms; ≤ 400 B/record',
  );
  return { raw, baselines, ratios, subject, notes };
}

/** What carrying one event per append (the PEP's `pep.decided`) costs against plain appends of the same run. */
function eventRatio(name: string, e: Measurement, m: Measurement): Ratio {
  return {
    name: `${name}-append+event/${name}-append`, path: 'append', requestsPerSec: Number((e.requestsPerSec / m.requestsPerSec).toFixed(3)),
    p50: Number((e.p50Ms / m.p50Ms).toFixed(2)), p99: Number((e.p99Ms / m.p99Ms).toFixed(2)),
  };
}

export const scenario: Scenario = {
  name: 'ledger-append',
  description: 'append pipeline: 64 in-process appenders on one chain, SQLite and Postgres, vs the raw Ed25519 sign rate',
  run,
};
