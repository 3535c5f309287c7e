/**
 * `svc bench ledger-append` (issue 36): the ledger append pipeline's capacity on this host, in this
 * process: a fresh keyring and store in a temporary directory (SQLite, synchronous=FULL) or a
 * throwaway Postgres database, the server's worker pool and `LedgerPipeline`, and 64 concurrent
 * appenders on one chain. Every counted append resolved only once its signed record was committed.
 * Afterwards the chain is read back (its head seq and record count must equal the appends
 * acknowledged) and the bytes each record takes are measured: the SQLite file after a WAL
 * checkpoint, indexes included (or the Postgres table with its indexes).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { Keyring } from '../ledger/keyring.js';
import { readHead } from '../ledger/ledger-store.js';
import { LedgerPipeline } from '../ledger/pipeline.js';
import type { AuditDraft } from '../ledger/record.js';
import { nowTimestamp } from '../ledger/time.js';
import { uuid7 } from '../ledger/uuid7.js';
import { SQLITE_FILE_NAME } from '../store/sqlite/sqlite-store.js';
import { openStore, type Store } from '../store/store.js';
import { createWorkerPool } from '../workers/pool.js';
import { percentiles, type Percentiles } from './loadgen.js';

export const APPENDERS = 64;

export interface LedgerAppendOptions {
  /** temporary directory: keyring and (SQLite) the store file */
  dataDir: string;
  store: 'sqlite' | 'postgres';
  /** Postgres admin DSN: a database `svc_bench_<hex>` is created on it for the run and dropped after */
  dsn?: string;
  durationMs: number;
  /** unrecorded appends before the clock starts (JIT, pool, page cache) */
  warmupMs: number;
  appenders?: number;
  onProgress?(p: { elapsedS: number; appends: number }): void;
}

export interface LedgerAppendResult {
  store: 'sqlite' | 'postgres';
  appenders: number;
  workerThreads: number;
  algorithm: string;
  durationS: number;
  /** appends acknowledged (durable) in the measured window */
  appends: number;
  appendsPerSec: number;
  /** latency of one append, from the call to its durable resolution, ms */
  latencyMs: Percentiles;
  /** the chain read back: records stored and the head seq, against every append acknowledged (warm-up included) */
  chain: { acknowledged: number; records: number; headSeq: number; complete: boolean };
  /**
   * store bytes each record adds, indexes included: the SQLite file's growth over the run (after a WAL checkpoint, free pages
   * excluded) or the Postgres table's size, over the record count
   */
  bytesPerRecord: number;
  /** SQLite: the whole file over the record count (the `npm run bench -- ledger-append` figure; the empty schema included) */
  fileBytesPerRecord?: number;
}

function draft(i: number, runId: string): AuditDraft {
  return {
    actor: `user:0197${(i % 97).toString(16).padStart(4, '0')}-aaaa-7bbb-8ccc-ddddeeeeffff`,
    actor_kind: 'user',
    action: i % 3 === 0 ? 'agent.update' : 'agent.create',
    target_kind: 'agent',
    target_id: `0197aaaa-bbbb-7ccc-8ddd-${(i % 1e12).toString(16).padStart(12, '0')}`,
    meta: { name: `agent-${i}`, status: 'active', run: runId },
  };
}

/** A throwaway database on the admin DSN; `drop` removes it. */
async function tempDatabase(adminDsn: string): Promise<{ dsn: string; drop(): Promise<void> }> {
  const name = `svc_bench_${randomBytes(6).toString('hex')}`;
  const admin = async (text: string): Promise<void> => {
    const client = new pg.Client({ connectionString: adminDsn, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(adminDsn);
  url.pathname = `/${name}`;
  return { dsn: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export async function runLedgerAppend(o: LedgerAppendOptions): Promise<LedgerAppendResult> {
  const appenders = o.appenders ?? APPENDERS;
  const runId = randomBytes(4).toString('hex');
  const keyring = await Keyring.open({ dataDir: o.dataDir, env: {} });
  const pool = createWorkerPool({ signingKeys: [keyring.signingKey()] });
  const temp = o.store === 'postgres' ? await tempDatabase(o.dsn as string) : undefined;
  let store: Store | undefined;
  try {
    store =
      o.store === 'postgres'
        ? await openStore({ backend: 'postgres', dataDir: o.dataDir, dsn: temp?.dsn as string, poolSize: 8 })
        : await openStore({ backend: 'sqlite', dataDir: o.dataDir, sqliteSynchronous: 'full' });
    await store.migrate();
    let emptyBytes = 0;
    if (o.store === 'sqlite') {
      await store.close();
      emptyBytes = sqliteUsedBytes(join(o.dataDir, SQLITE_FILE_NAME)).used;
      store = await openStore({ backend: 'sqlite', dataDir: o.dataDir, sqliteSynchronous: 'full' });
    }
    const tenant = uuid7();
    await store.transaction((tx) =>
      tx
        .insertInto('tenants')
        .values({ id: tenant, name: `bench-${runId}`, region: 'default', status: 'active', created_at: nowTimestamp(), deleted_at: null })
        .execute(),
    );
    const pipeline = new LedgerPipeline({ store, signer: () => keyring.active, pool });
    let i = 0;
    let acknowledged = 0;
    const drive = async (ms: number, lat?: number[]): Promise<{ count: number; seconds: number }> => {
      let stop = false;
      let count = 0;
      const started = performance.now();
      let lastProgress = started;
      const worker = async (): Promise<void> => {
        while (!stop) {
          const t0 = performance.now();
          await pipeline.append(tenant, draft(i++, runId));
          const t1 = performance.now();
          acknowledged++;
          if (stop) break;
          count++;
          lat?.push(t1 - t0);
          if (lat && o.onProgress && t1 - lastProgress >= 1000) {
            lastProgress = t1;
            o.onProgress({ elapsedS: (t1 - started) / 1000, appends: count });
          }
        }
      };
      const timer = setTimeout(() => (stop = true), ms);
      await Promise.all(Array.from({ length: appenders }, worker));
      clearTimeout(timer);
      return { count, seconds: ms / 1000 };
    };
    // One append before any clock: the chain's first record and the signing pool's start are not load.
    await pipeline.append(tenant, draft(i++, runId));
    acknowledged++;
    if (o.warmupMs > 0) await drive(o.warmupMs);
    const lat: number[] = [];
    const measured = await drive(o.durationMs, lat);
    await pipeline.close();
    // The store is this run's own: every record in it is of this chain.
    const chain = await store.withTenant(tenant, async (tx) => {
      const r = await tx
        .selectFrom('audit_records')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return { records: Number(r.n), headSeq: (await readHead(tx, tenant))?.seq ?? 0 };
    });
    let bytesPerRecord: number;
    let fileBytesPerRecord: number | undefined;
    if (o.store === 'postgres') {
      const size = await store.transaction((tx) =>
        sql<{ bytes: string }>`select pg_total_relation_size('audit_records')::text as bytes`.execute(tx),
      );
      bytesPerRecord = Math.round(Number(size.rows[0]?.bytes ?? 0) / Math.max(1, chain.records));
      await store.close();
    } else {
      await store.close();
      const { used, records } = sqliteUsedBytes(join(o.dataDir, SQLITE_FILE_NAME));
      bytesPerRecord = Math.round((used - emptyBytes) / Math.max(1, records));
      fileBytesPerRecord = Math.round(used / Math.max(1, records));
    }
    store = undefined;
    return {
      store: o.store,
      appenders,
      workerThreads: pool.threads,
      algorithm: keyring.active.algorithm,
      durationS: measured.seconds,
      appends: measured.count,
      appendsPerSec: measured.count / measured.seconds,
      latencyMs: percentiles(lat),
      chain: { acknowledged, ...chain, complete: chain.records === acknowledged && chain.headSeq === acknowledged },
      bytesPerRecord,
      ...(fileBytesPerRecord !== undefined ? { fileBytesPerRecord } : {}),
    };
  } finally {
    await store?.close();
    await pool.close();
    await temp?.drop();
  }
}

/** The file's used bytes after a checkpoint of the WAL (free pages excluded), and its record count. */
function sqliteUsedBytes(file: string): { used: number; records: number } {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    const used = (Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }))) * pageSize;
    const records = Number((db.prepare('select count(*) as n from audit_records').get() as { n: number }).n);
    return { used, records };
  } finally {
    db.close();
  }
}
