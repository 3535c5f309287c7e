/**
 * Scenario `accessmap-layout` (issue 7, docs/accessmap.md "Reaching 50,000 edges/s"): what the
 * layout of access_edges costs the recent level's merge, with everything else held equal. Each
 * layout gets a fresh SQLite file with the store's durability (WAL, synchronous=FULL) and the same
 * generated observations (the accessmap bench's estate shape), appended 5,000 per transaction to
 * an unindexed level and merged into the edge table every `SERVICE_ACCESSMAP_MERGE_ROWS` (250,000)
 * rows with the store's merge cache (2 GiB), as src/modules/accessmap/recent-edges.ts does. No
 * service code, CHECKs or foreign keys, in any layout: the difference between two rows of the
 * result is the layout alone.
 *
 * Layouts:
 * - `text` — today's (migration 005): UUID text keys, unique (tenant, origin, resource, mode),
 *   (tenant, resource, id), and the (tenant, id) primary key graph pages walk.
 * - `text-checked` — `text` with the migration's CHECKs (GLOB patterns on every id and timestamp)
 *   and the foreign key to tenants: what the store's integrity rules add to each merged row.
 * - `text-no-tenant` — the same without the tenant in the two random indexes (ids are unique
 *   across tenants, so the key stays unique).
 * - `int-keys` — integer node numbers in both random indexes, (origin_no, resource_no, mode) and
 *   (resource_no, edge rowid), and no (tenant, id) index: entries of about 15 bytes, not 110.
 *
 * Reported per layout: the rate of the whole (append + merge), the two parts' seconds, and the
 * rate append and merge would give if they ran on two cores at once (N / the longer part): a bound
 * derived from the two measured parts, labelled as such, not a measurement. Baseline from the same
 * run: raw SQLite append of the same rows (bench/lib/raw-sqlite.ts).
 *
 * `SVC_BENCH_LAYOUT_EDGES` (default 1,000,000) sets the size, `SVC_BENCH_LAYOUTS` (comma list) the layouts.
 *
 * `SVC_BENCH_LAYOUT_OVERLAP=1` measures that overlap instead of deriving it: the level lives in a
 * file of its own, appended by the main thread, and a worker thread with its own connection to the
 * edge file (the level's file attached) merges each 250,000 rows while the main thread appends
 * the next; the main thread deletes what was merged, and waits when more than two merges' worth
 * is waiting (so the rate is one that can be kept up). A feasibility measurement of "merges off
 * the writer" (docs/accessmap.md "Where the time goes"): it records no merged-up-to mark, so a
 * crash between merge and delete would merge rows twice, which the service could not allow.
 */
import { randomUUID } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { rawSqliteWriteRate } from '../lib/raw-sqlite.js';
import { rng } from '../lib/rng.js';
import { ts, uuid } from '../../src/store/sqlite/sqlite-checks.js';
import type { BenchContext, Measurement, Ratio, Scenario, ScenarioResult } from '../lib/types.js';

const BATCH = 5_000;
const MERGE_ROWS = 250_000;
const MERGE_CACHE_KIB = 2 * 1024 * 1024;

interface Layout {
  ddl: string[];
  /** foreign keys on, and a tenants row for the generator's tenant */
  tenants?: boolean;
  /** recent-level columns after seq, in the order `row` gives them */
  columns: string[];
  merge: string;
}

const COMMON = 'id text not null, tenant_id text not null, origin_kind text not null, origin_id text not null, resource_id text not null';
const REST =
  "mode text not null, permitted integer not null default 0, grant_source text not null default '', observed_count integer not null " +
  "default 0, first_seen text, last_seen text, confidence text not null default '', signal_source text not null default '', " +
  'created_at text not null, updated_at text not null';
const SET =
  'observed_count = access_edges.observed_count + excluded.observed_count, last_seen = excluded.last_seen, updated_at = ' +
  'excluded.updated_at';
const TEXT_COLS = [
  'id',
  'tenant_id',
  'origin_kind',
  'origin_id',
  'resource_id',
  'mode',
  'observed_count',
  'first_seen',
  'last_seen',
  'confidence',
  'signal_source',
  'recorded_at',
];
const INT_COLS = [
  'id',
  'tenant_id',
  'origin_kind',
  'origin_id',
  'resource_id',
  'origin_no',
  'resource_no',
  'mode',
  'observed_count',
  'first_seen',
  'last_seen',
  'confidence',
  'signal_source',
  'recorded_at',
];

function recentDdl(cols: string[]): string {
  return (
    `create table recent (seq integer primary key, ` +
    `${cols.map((c) => `${c} ${c.endsWith('_no') || c === 'observed_count' ? 'integer' : 'text'} not null`).join(', ')}) strict`
  );
}

function textLayout(tenantInIndexes: boolean): Layout {
  const t = tenantInIndexes ? 'tenant_id, ' : '';
  return {
    ddl: [
      `create table access_edges (${COMMON}, ${REST}, primary key (tenant_id, id)) strict`,
      `create unique index access_edges_key on access_edges (${t}origin_id, resource_id, mode)`,
      `create index access_edges_resource_idx on access_edges (${t}resource_id, id)`,
      recentDdl(TEXT_COLS),
    ],
    columns: TEXT_COLS,
    merge: `insert into access_edges (id, tenant_id, origin_kind, origin_id, resource_id, mode, observed_count, first_seen, last_seen, ` +
      `confidence, signal_source, created_at, updated_at)
      select id, tenant_id, origin_kind, origin_id, resource_id, mode, observed_count, first_seen, last_seen, confidence, ` +
        `signal_source, recorded_at, recorded_at from recent where true order by seq
      on conflict (${t}origin_id, resource_id, mode) do update set ${SET}`,
  };
}

/** `text` with migration 005's CHECKs and foreign key (src/store/sqlite/migrations/sqlite-005-accessmap.ts). */
function checkedLayout(): Layout {
  const base = textLayout(true);
  const u = (c: string): string => `check (${uuid(c)})`;
  const t = (c: string): string => `check (${c} is null or ${ts(c)})`;
  return {
    ...base,
    tenants: true,
    ddl: [
      'create table tenants (id text primary key) strict',
      `create table access_edges (id text not null ${u('id')}, tenant_id text not null references tenants (id) ${u('tenant_id')},
        origin_kind text not null check (origin_kind in ('agent', 'session', 'identity')), origin_id text not null ${u('origin_id')}, ` +
          `resource_id text not null ${u('resource_id')},
        mode text not null check (mode in ('r', 'rw')), permitted integer not null default 0 check (permitted in (0, 1)), grant_source ` +
          `text not null default '',
        observed_count integer not null default 0 check (observed_count >= 0), first_seen text ${t('first_seen')}, last_seen text ` +
          `${t('last_seen')},
        confidence text not null default '' check (confidence in ('', 'high', 'medium', 'low')), signal_source text not null default '',
        created_at text not null ${t('created_at')}, updated_at text not null ${t('updated_at')},
        check (permitted = 1 or observed_count > 0), primary key (tenant_id, id)) strict`,
      ...base.ddl.slice(1),
    ],
  };
}

const LAYOUTS: Record<string, Layout> = {
  text: textLayout(true),
  'text-checked': checkedLayout(),
  'text-no-tenant': textLayout(false),
  'int-keys': {
    ddl: [
      `create table access_edges (no integer primary key, ${COMMON}, origin_no integer not null, resource_no integer not null, ` +
        `${REST}) strict`,
      'create unique index access_edges_key on access_edges (origin_no, resource_no, mode)',
      'create index access_edges_resource_idx on access_edges (resource_no, no)',
      recentDdl(INT_COLS),
    ],
    columns: INT_COLS,
    merge:
      `insert into access_edges (id, tenant_id, origin_kind, origin_id, resource_id, origin_no, resource_no, mode, observed_count, ` +
      `first_seen, last_seen, confidence, signal_source, created_at, updated_at)
      select id, tenant_id, origin_kind, origin_id, resource_id, origin_no, resource_no, mode, observed_count, first_seen, last_seen, ` +
      `confidence, signal_source, recorded_at, recorded_at from recent where true order by seq
      on conflict (origin_no, resource_no, mode) do update set ${SET}`,
  },
};

/** Observation rows of the accessmap bench's estate shape: origins 16% of nodes, resources 84%, 20% `rw`. */
function generator(n: number): { row: (i: number, int: boolean) => unknown[]; reset: () => void; tenant: string } {
  const nodes = Math.max(100, Math.floor(n / 10));
  const origins = Array.from({ length: Math.floor(nodes * 0.16) }, () => randomUUID());
  const resources = Array.from({ length: nodes - origins.length }, () => randomUUID());
  const tenant = randomUUID();
  const at = new Date().toISOString().replace('Z', '000000Z');
  let rand = rng(42);
  return {
    tenant,
    reset: () => void (rand = rng(42)),
    row: (i, int) => {
      const o = Math.floor(rand() * origins.length);
      const r = Math.floor(rand() * resources.length);
      const mode = rand() < 0.2 ? 'rw' : 'r';
      // Edge ids as UUIDv7 are minted in increasing order: a counter in the last group keeps that order.
      const id = `019a0000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
      return int
        ? [id, tenant, 'agent', origins[o], resources[r], o + 1, origins.length + r + 1, mode, 1, at, at, 'high', 'bench', at]
        : [id, tenant, 'agent', origins[o], resources[r], mode, 1, at, at, 'high', 'bench', at];
    },
  };
}

function runLayout(
  dir: string,
  name: string,
  layout: Layout,
  n: number,
  gen: ReturnType<typeof generator>,
  log: (m: string) => void,
): { append: number; merge: number; mergeCpu: number; mergeKernel: number; bytes: number; worstMerge: number } {
  const file = join(dir, `layout-${name}.db`);
  const db = new BetterSqlite3(file);
  const int = layout.columns === INT_COLS;
  gen.reset();
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma(`cache_size = -${MERGE_CACHE_KIB}`);
    db.pragma(`foreign_keys = ${layout.tenants === true ? 'ON' : 'OFF'}`);
    for (const s of layout.ddl) db.exec(s);
    if (layout.tenants === true) db.prepare('insert into tenants (id) values (?)').run(gen.tenant);
    const one = `(${layout.columns.map(() => '?').join(', ')})`;
    const ins = db.prepare(`insert into recent (${layout.columns.join(', ')}) values ${Array.from({ length: 200 }, () => one).join(', ')}`);
    const merge = db.prepare(layout.merge);
    const empty = db.prepare('delete from recent');
    let append = 0;
    let mergeMs = 0;
    let worst = 0;
    // CPU of this thread during merges (the process has no other work then): tells a merge bound by
    // the CPU from one waiting on the disk.
    let cpu = 0;
    let kernel = 0;
    for (let done = 0; done < n;) {
      const upTo = Math.min(n, done + MERGE_ROWS);
      const a0 = performance.now();
      for (; done < upTo; done += BATCH) {
        db.transaction(() => {
          for (let j = done; j < done + BATCH; j += 200) {
            const params: unknown[] = [];
            for (let k = j; k < j + 200; k++) params.push(...gen.row(k, int));
            ins.run(...params);
          }
        })();
      }
      append += performance.now() - a0;
      const m0 = performance.now();
      const c0 = process.cpuUsage();
      db.transaction(() => {
        merge.run();
        empty.run();
      })();
      const c = process.cpuUsage(c0);
      cpu += c.user + c.system;
      kernel += c.system;
      const m = performance.now() - m0;
      mergeMs += m;
      worst = Math.max(worst, m);
      if (done % 1_000_000 === 0) log(`  ${name}: ${done} edges, last merge ${Math.round(MERGE_ROWS / (m / 1000))}/s`);
    }
    // Copying the merges' pages from the WAL into the file is part of the cost (bench accessmap counts it too).
    const c0 = performance.now();
    db.pragma('wal_checkpoint(TRUNCATE)');
    mergeMs += performance.now() - c0;
    return {
      append: append / 1000,
      merge: mergeMs / 1000,
      mergeCpu: cpu / 1e6,
      mergeKernel: kernel / 1e6,
      bytes: statSync(file).size,
      worstMerge: worst,
    };
  } finally {
    db.close();
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
}

/**
 * The worker of the overlapped mode: merges `recent` of the attached level file into the edge file
 * up to the seq it is sent, adds the merge's time to the shared totals, then stores that seq in
 * `shared[0]` and wakes the main thread (which never yields to its event loop while it appends).
 */
const MERGE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const shared = new Int32Array(workerData.shared, 0, 2);
const times = new Float64Array(workerData.shared, 8, 3); // merge ms in all, worst merge ms, merge CPU µs
// A failure sets shared[1] to -1 and wakes the main thread, which would otherwise wait for ever.
const fail = (err) => { console.error('accessmap-layout merge worker:', err); Atomics.store(shared, 1, -1); Atomics.notify(shared, 0); ` +
  `Atomics.notify(shared, 1); };
try {
const Database = require(workerData.driver);
const db = new Database(workerData.edges);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('cache_size = -' + workerData.cacheKib);
db.prepare('attach database ? as lvl').run(workerData.level);
const merge = db.prepare(workerData.merge.replace('from recent where true', 'from lvl.recent where seq > ? and seq <= ?'));
let done = 0;
parentPort.on('message', (upTo) => { try {
  if (upTo === 'stop') { db.pragma('wal_checkpoint(TRUNCATE)'); db.close(); Atomics.store(shared, 1, 1); Atomics.notify(shared, 1); ` +
    `return; }
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  db.transaction(() => merge.run(done, upTo))();
  done = upTo;
  const c = process.cpuUsage(c0);
  const ms = performance.now() - t0;
  times[0] += ms;
  times[1] = Math.max(times[1], ms);
  times[2] += c.user + c.system;
  Atomics.store(shared, 0, upTo);
  Atomics.notify(shared, 0);
} catch (err) { fail(err); } });
} catch (err) { fail(err); }
`;

/**
 * Append on this thread and merge on a worker at once (`SVC_BENCH_LAYOUT_OVERLAP=1`); returns the wall time of the whole and the merges'
 * own time.
 */
async function runOverlapped(
  dir: string,
  name: string,
  layout: Layout,
  n: number,
  gen: ReturnType<typeof generator>,
  log: (m: string) => void,
): Promise<{ seconds: number; mergeSeconds: number; mergeCpu: number; waitSeconds: number; worstMerge: number; bytes: number }> {
  const levelFile = join(dir, `overlap-${name}-level.db`);
  const edgesFile = join(dir, `overlap-${name}-edges.db`);
  const int = layout.columns === INT_COLS;
  gen.reset();
  const level = new BetterSqlite3(levelFile);
  level.pragma('journal_mode = WAL');
  level.pragma('synchronous = FULL');
  level.exec(layout.ddl.find((d) => d.startsWith('create table recent')) as string);
  const edges = new BetterSqlite3(edgesFile);
  edges.pragma('journal_mode = WAL');
  for (const d of layout.ddl) if (!d.startsWith('create table recent')) edges.exec(d);
  if (layout.tenants === true) edges.prepare('insert into tenants (id) values (?)').run(gen.tenant);
  edges.close();
  const shared = new SharedArrayBuffer(32);
  const flags = new Int32Array(shared, 0, 2);
  const times = new Float64Array(shared, 8, 3);
  const worker = new Worker(MERGE_WORKER, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      edges: edgesFile,
      level: levelFile,
      merge: layout.merge,
      cacheKib: MERGE_CACHE_KIB,
      shared,
    },
  });
  const one = `(${layout.columns.map(() => '?').join(', ')})`;
  const ins = level.prepare(
    `insert into recent (${layout.columns.join(', ')}) values ${Array.from({ length: 200 }, () => one).join(', ')}`,
  );
  const drop = level.prepare('delete from recent where seq <= ?');
  let asked = 0; // merged up to this seq once the worker answers
  let deleted = 0;
  let waitMs = 0;
  const t0 = performance.now();
  /** Blocks until `done()`; throws if the worker failed (shared[1] = -1). */
  const waitFor = (slot: 0 | 1, done: () => boolean): void => {
    while (!done()) {
      if (Atomics.load(flags, 1) === -1) throw new Error(`merge worker for layout ${name} failed (its error is on stderr)`);
      Atomics.wait(flags, slot, Atomics.load(flags, slot), 1000);
    }
  };
  const settle = (): void => {
    const merged = Atomics.load(flags, 0);
    if (merged > deleted) {
      drop.run(merged);
      deleted = merged;
    }
  };
  try {
    for (let done = 0; done < n; done += BATCH) {
      level.transaction(() => {
        settle();
        for (let j = done; j < done + BATCH; j += 200) {
          const params: unknown[] = [];
          for (let k = j; k < j + 200; k++) params.push(...gen.row(k, int));
          ins.run(...params);
        }
      })();
      const appended = done + BATCH; // seq = rowid, from 1, never reused here
      const merged = Atomics.load(flags, 0);
      if (merged === asked && appended - asked >= MERGE_ROWS) {
        asked = appended;
        worker.postMessage(asked);
      }
      // Keep at most two merges' worth waiting: the rate must be one the merge keeps up with.
      if (appended - Atomics.load(flags, 0) > 2 * MERGE_ROWS) {
        const w0 = performance.now();
        waitFor(0, () => appended - Atomics.load(flags, 0) <= 2 * MERGE_ROWS);
        waitMs += performance.now() - w0;
      }
      if (appended % 1_000_000 === 0) log(`  ${name} overlapped: ${appended} appended, ${Atomics.load(flags, 0)} merged`);
    }
    // The last rows: wait for the merge running, then merge the rest.
    const w0 = performance.now();
    waitFor(0, () => Atomics.load(flags, 0) === asked);
    if (asked < n) {
      asked = n;
      worker.postMessage(asked);
      waitFor(0, () => Atomics.load(flags, 0) === asked);
    }
    worker.postMessage('stop');
    waitFor(1, () => Atomics.load(flags, 1) === 1);
    waitMs += performance.now() - w0;
    level.transaction(settle)();
    level.pragma('wal_checkpoint(TRUNCATE)');
    const seconds = (performance.now() - t0) / 1000;
    return {
      seconds,
      mergeSeconds: (times[0] as number) / 1000,
      mergeCpu: (times[2] as number) / 1e6,
      waitSeconds: waitMs / 1000,
      worstMerge: times[1] as number,
      bytes: statSync(edgesFile).size,
    };
  } finally {
    await worker.terminate();
    level.close();
    for (const f of [levelFile, edgesFile]) for (const x of [f, `${f}-wal`, `${f}-shm`]) rmSync(x, { force: true });
  }
}

export const scenario: Scenario = {
  name: 'accessmap-layout',
  description:
    'access_edges layouts (text keys, text without tenant, integer node numbers) under the recent level: append and merge cost at one size',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const n = Math.max(BATCH, Math.floor(Number(process.env['SVC_BENCH_LAYOUT_EDGES'] ?? 1_000_000) / BATCH) * BATCH);
    const names = (process.env['SVC_BENCH_LAYOUTS'] ?? Object.keys(LAYOUTS).join(',')).split(',').map((s) => s.trim());
    for (const name of names)
      if (!(name in LAYOUTS)) throw new Error(`unknown layout ${JSON.stringify(name)}; known: ${Object.keys(LAYOUTS).join(', ')}`);
    const gen = generator(n);
    const rawRows = Math.min(n, 500_000);
    const raw = rawSqliteWriteRate(
      ctx.tmpDir,
      'append',
      { ddl: [recentDdl(TEXT_COLS).replace('recent', 't')], insert: `insert into t (${TEXT_COLS.join(', ')})`, columns: TEXT_COLS.length },
      rawRows,
      BATCH,
      (i) => gen.row(i, false),
    );
    ctx.log(`baseline raw SQLite append: ${Math.round(raw)} rows/s`);
    const rawM: Measurement = {
      target: 'raw-sqlite',
      path: `append, unindexed (${rawRows} rows)`,
      requestsPerSec: Math.round(raw),
      p50Ms: 0,
      p99Ms: 0,
      detail: {},
    };
    const out: Measurement[] = [];
    const ratios: Ratio[] = [];
    const notes: string[] = [];
    if (process.env['SVC_BENCH_LAYOUT_OVERLAP'] === '1') {
      for (const name of names) {
        ctx.log(`layout ${name}, overlapped: ${n} edges …`);
        const r = await runOverlapped(ctx.tmpDir, name, LAYOUTS[name] as Layout, n, gen, ctx.log);
        const rate = n / r.seconds;
        out.push({
          target: `layout ${name}, overlapped`,
          path: `append on one thread, merge on another (${n} edges)`,
          requestsPerSec: Math.round(rate),
          p50Ms: 0,
          p99Ms: 0,
          detail: {
            seconds: Number(r.seconds.toFixed(1)),
            mergeSeconds: Number(r.mergeSeconds.toFixed(1)),
            mergeCpuSeconds: Number(r.mergeCpu.toFixed(1)),
            appendWaitedSeconds: Number(r.waitSeconds.toFixed(1)),
            worstMergeMs: Math.round(r.worstMerge),
            edgeFileBytesPerEdge: Math.round(r.bytes / n),
          },
        });
        ratios.push({
          name: `layout-${name}-overlapped/raw-sqlite-append`,
          path: 'append + merge, overlapped',
          requestsPerSec: Number((rate / raw).toFixed(3)),
          p50: 0,
          p99: 0,
        });
        notes.push(
          `${name}, overlapped (measured): ${Math.round(rate)} edges/s at ${n} in ${r.seconds.toFixed(1)} s; merges took ` +
            `${r.mergeSeconds.toFixed(1)} s on the worker (worst ${(r.worstMerge / 1000).toFixed(1)} s), the appending thread waited ` +
            `${r.waitSeconds.toFixed(1)} s for them`,
        );
      }
      return {
        raw: out,
        baselines: [rawM],
        ratios,
        subject: { edges: n, merge_rows: MERGE_ROWS, batch: BATCH, sqlite_synchronous: 'full', layouts: names, overlapped: true },
        notes,
      };
    }
    for (const name of names) {
      ctx.log(`layout ${name}: ${n} edges …`);
      const r = runLayout(ctx.tmpDir, name, LAYOUTS[name] as Layout, n, gen, ctx.log);
      const rate = n / (r.append + r.merge);
      const overlapped = n / Math.max(r.append, r.merge);
      out.push({
        target: `layout ${name}`,
        path: `append + merge (${n} edges)`,
        requestsPerSec: Math.round(rate),
        p50Ms: 0,
        p99Ms: 0,
        detail: {
          appendSeconds: Number(r.append.toFixed(1)),
          mergeSeconds: Number(r.merge.toFixed(1)),
          mergeCpuSeconds: Number(r.mergeCpu.toFixed(1)),
          mergeKernelSeconds: Number(r.mergeKernel.toFixed(1)),
          worstMergeMs: Math.round(r.worstMerge),
          bytesPerEdge: Math.round(r.bytes / n),
          derivedOverlappedRate: Math.round(overlapped),
        },
      });
      ratios.push({
        name: `layout-${name}/raw-sqlite-append`,
        path: 'append + merge',
        requestsPerSec: Number((rate / raw).toFixed(3)),
        p50: 0,
        p99: 0,
      });
      notes.push(
        `${name}: ${Math.round(rate)} edges/s at ${n} (append ${r.append.toFixed(1)} s + merge ${r.merge.toFixed(1)} s of which ` +
          `${r.mergeCpu.toFixed(1)} s CPU (${r.mergeKernel.toFixed(1)} s kernel) before the last checkpoint, worst merge ` +
          `${(r.worstMerge / 1000).toFixed(1)} s, ${Math.round(r.bytes / n)} B/edge); derived, not measured: ` +
          `${Math.round(overlapped)}/s if append and merge ran at once`,
      );
    }
    return {
      raw: out,
      baselines: [rawM],
      ratios,
      subject: { edges: n, merge_rows: MERGE_ROWS, batch: BATCH, sqlite_synchronous: 'full', layouts: names },
      notes,
    };
  },
};
