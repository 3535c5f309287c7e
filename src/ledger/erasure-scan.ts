/**
 * The SQLite scan of a ledger erasure, run on an export thread (erasure-worker.ts) on a read-only
 * connection of its own: a window of seqs is matched in SQL (`instr`), and each matched record's
 * meta commitment (one SHA-256) is computed there, so the main thread only runs the short UPDATE
 * of the matched rows on the writer (erasure.ts). The meta of a record never changes except by
 * erasure (migration 29's trigger), so a commitment computed on this snapshot is the one to keep;
 * the UPDATE skips a record erased meanwhile.
 *
 * The bytes step runs here too: `wal_checkpoint` on a read-write connection of this thread, PASSIVE
 * first (never waits on, nor blocks, the writer) until every frame is in the main file, then
 * TRUNCATE without a busy wait (only the WAL reset is left to do), so neither the checkpoint's page
 * copies nor its fsync ever run on the main thread.
 */
import BetterSqlite3 from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHECKPOINT_ACTION } from './checkpoint.js';
import { MAX_SEQ, SEQ_BITS } from './row-codec.js';
import { metaCommitment } from './preimage.js';

/** Which records are the subject's (erasure.ts `SubjectMatch`, structured-clone-safe). */
export interface ScanMatch {
  actors: readonly string[];
  targets: readonly string[];
  strings: readonly string[];
}

export type ErasureTask =
  /** match seqs [lo, hi] of `tenant`'s chain; answers `[seq, commitment]` of every match not yet erased */
  | { kind: 'erasure-scan'; file: string; tenant: string; lo: number; hi: number; match: ScanMatch }
  /** checkpoint the WAL into the main file and truncate it (answers whether a reader kept it busy) */
  | { kind: 'erasure-checkpoint'; file: string; attempts?: number };

export type ScanResult = { kind: 'erasure-scan'; rows: Array<[number, Uint8Array]> };
export type CheckpointResult = { kind: 'erasure-checkpoint'; busy: boolean; wal_frames: number };

/**
 * `s` with A–Z lowered and nothing else changed: needles and meta are compared with ASCII-only case
 * folding (SQLite's `lower()` folds ASCII only; Postgres uses `translate`), so `Kim@Example.test`
 * matches `kim@example.test` while a look-alike such as the Kelvin sign does not.
 */
export function foldAscii(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The SQL of one window (shared by the thread and the in-process fallback). */
export function scanSql(m: ScanMatch): string {
  const ors: string[] = [];
  for (let i = 0; i < m.strings.length; i++) ors.push('instr(lower(r.meta), ?) > 0');
  if (m.actors.length > 0) ors.push(`r.actor in (${m.actors.map(() => '?').join(',')})`);
  if (m.targets.length > 0) ors.push(`r.target_id in (${m.targets.map(() => '?').join(',')})`);
  return `select (r.pos & ${MAX_SEQ}) as seq, r.meta as meta, r.meta_blind as blind from audit_records r
    where r.pos between (select chain << ${SEQ_BITS} from audit_heads where tenant_id = ?) + ?
                    and (select chain << ${SEQ_BITS} from audit_heads where tenant_id = ?) + ?
      and r.meta_blind is not null and r.action <> ? and (${ors.join(' or ')})`;
}

/** Runs one window on `db` (any connection that can read `svc.db`). */
export function scanWindow(db: BetterSqlite3.Database, tenant: string, lo: number, hi: number, m: ScanMatch): Array<[number, Uint8Array]> {
  const params = [tenant, lo, tenant, hi, CHECKPOINT_ACTION, ...m.strings.map(foldAscii), ...m.actors, ...m.targets];
  const rows = db.prepare(scanSql(m)).all(...params) as Array<{
    seq: number;
    meta: string;
    blind: Uint8Array;
  }>;
  return rows.map((r) => [Number(r.seq), new Uint8Array(metaCommitment(r.blind, r.meta))]);
}

const readers = new Map<string, { db: BetterSqlite3.Database; timer: NodeJS.Timeout | undefined }>();

function readerFor(file: string): BetterSqlite3.Database {
  let e = readers.get(file);
  if (e === undefined) {
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 5000 });
    db.pragma('cache_size = -2048');
    e = { db, timer: undefined };
    readers.set(file, e);
  }
  if (e.timer !== undefined) clearTimeout(e.timer);
  const cur = e;
  // An erasure done must not keep a reader open (its snapshot would hold the WAL).
  cur.timer = setTimeout(() => {
    readers.delete(file);
    cur.db.close();
  }, 2_000);
  cur.timer.unref();
  return cur.db;
}

function closeReader(file: string): void {
  const e = readers.get(file);
  if (e === undefined) return;
  if (e.timer !== undefined) clearTimeout(e.timer);
  readers.delete(file);
  e.db.close();
}

/**
 * PASSIVE checkpoints until the WAL is fully backfilled, then TRUNCATE without waiting; a busy
 * answer is retried after a pause (a transaction of the server in flight), at most `attempts` times.
 */
export async function checkpointTruncate(file: string, attempts = 60): Promise<CheckpointResult> {
  closeReader(file);
  const db = new BetterSqlite3(file, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('secure_delete = on');
    let frames = -1;
    for (let i = 0; i < attempts; i++) {
      try {
        const p = (db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>)[0];
        if (p !== undefined && p.log === p.checkpointed) {
          const t = (db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>)[0];
          frames = t?.log ?? -1;
          if (t !== undefined && t.busy === 0 && t.log === 0) return { kind: 'erasure-checkpoint', busy: false, wal_frames: 0 };
        }
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      }
      await sleep(50);
    }
    return { kind: 'erasure-checkpoint', busy: true, wal_frames: frames };
  } finally {
    db.close();
  }
}

/** The task of one erasure step on this thread. */
export async function runErasureTask(task: ErasureTask): Promise<ScanResult | CheckpointResult> {
  if (task.kind === 'erasure-scan')
    return { kind: 'erasure-scan', rows: scanWindow(readerFor(task.file), task.tenant, task.lo, task.hi, task.match) };
  return checkpointTruncate(task.file, task.attempts);
}
