/**
 * Erasure of ledger meta (DECISIONS.md "Hash preimage"; docs/compliance.md): for the records of a
 * subject, the meta text and its 32-byte blind are destroyed together and the meta commitment is
 * stored in their place. The record hash covers the commitment, not the meta, so every hash,
 * signature and checkpoint of the chain stays valid and the chain still verifies online and from
 * every export; what a record says about a person is gone, while that the record existed, who acted
 * (`actor`), on what (`target_kind`, `target_id`), when and the action stay.
 *
 * The one UPDATE `audit_records` admits is this one (migration 29): SQLite's trigger admits only the
 * erasure's shape; on Postgres the app role has no UPDATE grant and calls the SECURITY DEFINER
 * function `svc_audit_erase_meta`, which recomputes the commitment in SQL (its trigger checks it).
 *
 * Work goes in windows of seqs, yielding to the event loop between windows, so a large chain never
 * holds the writer or the main thread for long. On SQLite, with an {@link ErasureOffload} (the
 * server's export threads), each window is matched in SQL (`instr`) and its commitments computed on
 * an export thread's read-only connection (erasure-scan.ts); the main thread only runs the UPDATE of
 * the matched rows, one short transaction on the writer. Without one (an embedding with no export
 * pool) the same scan runs on the writer connection. On Postgres match and update run in the
 * database server.
 *
 * SQLite writes the erasure with `secure_delete` on, so the freed cells are zeroed in the page; the
 * old page images may still sit in the WAL until a checkpoint: the offload's checkpoint (PASSIVE
 * until backfilled, then TRUNCATE, on the export thread) or {@link reclaimSqlite} truncates it
 * (docs/compliance.md "The bytes are gone").
 */
import { setImmediate as yieldTick } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import Database from 'better-sqlite3';
import type { Database as Schema } from '../store/schema.js';
import type { Store } from '../store/store-types.js';
import { CHECKPOINT_ACTION } from './checkpoint.js';
import { MAX_SEQ, SEQ_BITS } from './row-codec.js';
import { metaCommitment } from './preimage.js';
import { foldAscii, type CheckpointResult, type ErasureTask, type ScanResult } from './erasure-scan.js';

/** Runs erasure-scan.ts tasks off the main thread (the export pool, erasure-worker.ts), on `file` (`svc.db`). */
export interface ErasureOffload {
  file: string;
  run(task: ErasureTask): Promise<ScanResult | CheckpointResult>;
}

/** Shortest string erasure matches inside meta (a shorter one would match unrelated records). */
export const MIN_NEEDLE = 4;
/**
 * Seqs per window (one scan and one short transaction each). 5,000: a window scanned on the writer
 * (no offload) holds the main thread a few ms; with an offload it bounds a task's result.
 */
const WINDOW = 5_000;

/** Which records are the subject's: any of these. */
export interface SubjectMatch {
  /** exact `actor` values, e.g. `user:<id>` */
  actors: readonly string[];
  /** exact `target_id` values */
  targets: readonly string[];
  /** strings whose presence anywhere in the meta text makes the record the subject's (ids, e-mail addresses, names) */
  strings: readonly string[];
}

export interface LedgerErasureResult {
  /** records whose meta was erased by this run */
  erased: number;
  /** records of the chain looked at */
  scanned: number;
  /** the chain's head seq when the erasure started (records appended later are not looked at) */
  head_seq: number;
}

/** Refuses a match that would erase unrelated records (a needle too short to name a subject). */
export function checkMatch(m: SubjectMatch): void {
  for (const s of m.strings)
    if (s.length < MIN_NEEDLE) throw new RangeError(`erasure string ${JSON.stringify(s)} is shorter than ${MIN_NEEDLE} characters`);
  if (m.actors.length + m.targets.length + m.strings.length === 0) throw new RangeError('erasure names no subject');
}

function matchSql(m: SubjectMatch, instr: (needle: string) => RawBuilder<unknown>): RawBuilder<unknown> {
  const ors: RawBuilder<unknown>[] = [];
  for (const s of m.strings) ors.push(instr(s));
  if (m.actors.length > 0) ors.push(sql`r.actor in (${sql.join(m.actors)})`);
  if (m.targets.length > 0) ors.push(sql`r.target_id in (${sql.join(m.targets)})`);
  return sql`(${sql.join(ors, sql` or `)})`;
}

/**
 * Erases the meta of `tenant`'s records that match `m`, from seq 1 to the chain's head at the start,
 * in windows. Checkpoint records (chain state only) are never touched. Idempotent: an erased record
 * is skipped, so a run cut short is finished by running it again.
 */
export async function eraseLedgerMeta(
  store: Store,
  tenant: string,
  m: SubjectMatch,
  progress: (r: LedgerErasureResult) => void = () => {},
  offload?: ErasureOffload,
): Promise<LedgerErasureResult> {
  checkMatch(m);
  const head = await store.withTenant(tenant, async (tx) => {
    const r = await tx.selectFrom('audit_heads').select('seq').where('tenant_id', '=', tenant).executeTakeFirst();
    return r === undefined ? 0 : Number(r.seq);
  });
  const out: LedgerErasureResult = { erased: 0, scanned: 0, head_seq: head };
  const sqlite = store.backend === 'sqlite';
  for (let lo = 1; lo <= head; lo += WINDOW) {
    const hi = Math.min(head, lo + WINDOW - 1);
    if (sqlite && offload !== undefined) {
      const r = await offload.run({
        kind: 'erasure-scan',
        file: offload.file,
        tenant,
        lo,
        hi,
        match: { actors: [...m.actors], targets: [...m.targets], strings: [...m.strings] },
      });
      const rows = r.kind === 'erasure-scan' ? r.rows : [];
      if (rows.length > 0) out.erased += await store.withTenant(tenant, (tx) => sqliteUpdate(tx, tenant, rows));
    } else {
      out.erased += await store.withTenant(tenant, (tx) => (sqlite ? sqliteWindow(tx, tenant, lo, hi, m) : postgresWindow(tx, lo, hi, m)));
    }
    out.scanned += hi - lo + 1;
    progress(out);
    await yieldTick();
  }
  return out;
}

async function sqliteWindow(tx: Kysely<Schema>, tenant: string, lo: number, hi: number, m: SubjectMatch): Promise<number> {
  // The freed cells are zeroed in their page (per connection; left on: it only costs writes).
  await sql`pragma secure_delete = on`.execute(tx);
  const base = sql`(select chain << ${SEQ_BITS} from audit_heads where tenant_id = ${tenant})`;
  const rows = (
    await sql<{ seq: number; meta: string; meta_blind: Uint8Array }>`
      select (r.pos & ${MAX_SEQ}) as seq, r.meta, r.meta_blind from audit_records r
      where r.pos between ${base} + ${lo} and ${base} + ${hi} and r.meta_blind is not null and r.action <> ${CHECKPOINT_ACTION}
        and ${matchSql(m, (s) => sql`instr(lower(r.meta), ${foldAscii(s)}) > 0`)}`.execute(tx)
  ).rows;
  for (const r of rows) {
    const commitment = metaCommitment(r.meta_blind, r.meta);
    await sql`update audit_records set meta = null, meta_blind = null,
      meta_commitment = ${commitment} where pos = ${base} + ${r.seq}`.execute(
      tx,
    );
  }
  return rows.length;
}

/** The writer's part of an offloaded window: the UPDATE of rows matched on an export thread (a record erased meanwhile is skipped). */
async function sqliteUpdate(tx: Kysely<Schema>, tenant: string, rows: ReadonlyArray<readonly [number, Uint8Array]>): Promise<number> {
  await sql`pragma secure_delete = on`.execute(tx);
  const base = sql`(select chain << ${SEQ_BITS} from audit_heads where tenant_id = ${tenant})`;
  let n = 0;
  for (const [seq, commitment] of rows) {
    const r =
      await sql`update audit_records set meta = null, meta_blind = null, meta_commitment = ${Buffer.from(commitment)} where pos = ${base} +
        ${seq} and meta_blind is not null`.execute(
        tx,
      );
    n += Number(r.numAffectedRows ?? 0n);
  }
  return n;
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = UPPER.toLowerCase();

async function postgresWindow(tx: Kysely<Schema>, lo: number, hi: number, m: SubjectMatch): Promise<number> {
  // RLS confines the select to the bound tenant; the definer function erases in that tenant only.
  const r = await sql<{ n: string | number }>`
    select svc_audit_erase_meta(array(
      select r.seq from audit_records r
      where r.tenant_id = current_setting('app.tenant_id')::uuid and r.seq between ${lo} and ${hi}
        and r.meta_blind is not null and r.action <> ${CHECKPOINT_ACTION}
        and ${matchSql(m, (s) => sql`strpos(translate(r.meta, ${UPPER}, ${LOWER}), ${foldAscii(s)}) > 0`)})) as n`.execute(tx);
  return Number(r.rows[0]?.n ?? 0);
}

/** What {@link reclaimSqlite} found. */
export interface ReclaimResult {
  /** `wal_checkpoint(TRUNCATE)`: true when a reader kept it from finishing (run it again) */
  busy: boolean;
  /** WAL frames left after the checkpoint (0 when the WAL file was truncated) */
  wal_frames: number;
  vacuumed: boolean;
}

/**
 * The bytes step on SQLite, on a connection of its own to the store's file: `wal_checkpoint(TRUNCATE)`
 * moves the erased pages into the main file and truncates the WAL, which held the old page images;
 * with `vacuum`, `VACUUM` also rebuilds the main file (freelist and slack space included; it holds
 * the writer for the whole rebuild). Postgres: see docs/compliance.md (`VACUUM (FULL)` as the owner).
 */
export function reclaimSqlite(dbFile: string, opts: { vacuum?: boolean; busyTimeoutMs?: number } = {}): ReclaimResult {
  const db = new Database(dbFile, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
    db.pragma('secure_delete = on');
    let vacuumed = false;
    if (opts.vacuum) {
      db.exec('vacuum');
      vacuumed = true;
    }
    const r = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    const row = r[0] ?? { busy: 1, log: -1, checkpointed: -1 };
    return { busy: row.busy !== 0, wal_frames: row.log, vacuumed };
  } finally {
    db.close();
  }
}
