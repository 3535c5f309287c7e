/**
 * The collector's on-disk spool: observations are made durable here before anything is sent, and
 * leave only once the core acked them (issue 6: "writes observations to a local on-disk spool
 * first, pushes from the spool, deletes only what the core acked").
 *
 * Layout: append-only segment files `seg-<16 digits>.jsonl`, one batch per line:
 * `{"id","source","cursor","items"}`. Each append is written and fsync'd before it is used; a line
 * torn by a crash (no final newline, or not JSON) is cut off when the spool reopens. The line
 * carries the source's cursor after its items, so "spooled" and "read from the source" are one
 * fact: on restart a source resumes exactly after the last spooled batch (never re-reading what is
 * spooled, never skipping what is not). `state.json` (atomic replace) keeps the latest cursor per
 * source for when every segment has been acked and deleted. A segment is deleted once all its
 * batches are acked; batches of a partly acked segment are re-sent after a restart, which the
 * core's batch-id idempotency makes harmless.
 */
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type { Item } from './items.js';

/** One spooled batch. */
export interface SpoolBatch {
  id: string;
  /** append order across the spool's life; decides which cursor is the latest */
  n: number;
  source: string;
  cursor: unknown;
  items: Item[];
}

export interface SpoolOptions {
  dir: string;
  /** batches per segment before a new one starts (default 64) */
  segmentBatches?: number;
}

interface Segment {
  name: string;
  ids: string[];
}

const SEGMENT = /^seg-(\d{16})\.jsonl$/;

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The spool of one collector; single process (the directory is not shared). */
export class Spool {
  readonly dir: string;
  private readonly segmentBatches: number;
  private readonly segments: Segment[] = [];
  private readonly batches = new Map<string, { batch: SpoolBatch; segment: Segment }>();
  private readonly acked = new Set<string>();
  private cursors: Record<string, { n: number; cursor: unknown }> = {};
  private lastN = 0;
  private active: { segment: Segment; fd: number } | undefined;
  private nextSeq = 1;

  private constructor(opts: SpoolOptions) {
    this.dir = opts.dir;
    this.segmentBatches = opts.segmentBatches ?? 64;
  }

  /** Open (creating) the spool, repair a torn tail, and load what is still unacked. */
  static open(opts: SpoolOptions): Spool {
    const spool = new Spool(opts);
    mkdirSync(spool.dir, { recursive: true, mode: 0o700 });
    lockSpool(spool.dir);
    spool.load();
    return spool;
  }

  private load(): void {
    try {
      this.cursors = JSON.parse(readFileSync(path.join(this.dir, 'state.json'), 'utf8')).cursors ?? {};
    } catch {
      this.cursors = {};
    }
    for (const c of Object.values(this.cursors)) this.lastN = Math.max(this.lastN, c.n);
    const names = readdirSync(this.dir).filter((n) => SEGMENT.test(n)).sort();
    for (const name of names) {
      const file = path.join(this.dir, name);
      const text = readFileSync(file, 'utf8');
      const segment: Segment = { name, ids: [] };
      let good = 0;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        let batch: SpoolBatch;
        try {
          batch = JSON.parse(line) as SpoolBatch;
        } catch {
          break;
        }
        segment.ids.push(batch.id);
        this.batches.set(batch.id, { batch, segment });
        // The latest append wins, whether its cursor survives here or only in state.json (a later
        // segment may have been acked and deleted while this one was not).
        this.remember(batch.source, batch.n, batch.cursor);
        start = nl + 1;
        good = Buffer.byteLength(text.slice(0, start));
      }
      if (good < statSync(file).size) truncateSync(file, good);
      if (segment.ids.length === 0) rmSync(file, { force: true });
      else this.segments.push(segment);
      this.nextSeq = Math.max(this.nextSeq, Number(SEGMENT.exec(name)?.[1]) + 1);
    }
  }

  private remember(source: string, n: number, cursor: unknown): void {
    const seen = this.cursors[source];
    if (!seen || seen.n <= n) this.cursors[source] = { n, cursor };
    this.lastN = Math.max(this.lastN, n);
  }

  /** The cursor of `source` after the last batch spooled from it (undefined: start from scratch). */
  cursor(source: string): unknown {
    return this.cursors[source]?.cursor;
  }

  /** Make a batch durable; returns it with its new id. Resolves only after fsync. */
  append(source: string, cursor: unknown, items: Item[]): SpoolBatch {
    const batch: SpoolBatch = { id: randomUUID(), n: this.lastN + 1, source, cursor, items };
    if (!this.active || this.active.segment.ids.length >= this.segmentBatches) this.rollSegment();
    const active = this.active as { segment: Segment; fd: number };
    writeSync(active.fd, `${JSON.stringify(batch)}\n`);
    fsyncSync(active.fd);
    active.segment.ids.push(batch.id);
    this.batches.set(batch.id, { batch, segment: active.segment });
    this.remember(source, batch.n, cursor);
    this.writeState();
    return batch;
  }

  /** Cursor-only progress (e.g. a source read only unusable lines): remembered without a batch. */
  advance(source: string, cursor: unknown): void {
    this.remember(source, ++this.lastN, cursor);
    this.writeState();
  }

  private rollSegment(): void {
    if (this.active) closeSync(this.active.fd);
    const name = `seg-${String(this.nextSeq++).padStart(16, '0')}.jsonl`;
    const fd = openSync(path.join(this.dir, name), 'a', 0o600);
    fsyncDir(this.dir);
    const segment: Segment = { name, ids: [] };
    this.segments.push(segment);
    this.active = { segment, fd };
  }

  private writeState(): void {
    const tmp = path.join(this.dir, 'state.json.tmp');
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify({ cursors: this.cursors }));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path.join(this.dir, 'state.json'));
    fsyncDir(this.dir);
  }

  /** Unacked batches, oldest first. */
  pending(): SpoolBatch[] {
    const out: SpoolBatch[] = [];
    for (const s of this.segments)
      for (const id of s.ids) if (!this.acked.has(id)) out.push((this.batches.get(id) as { batch: SpoolBatch }).batch);
    return out;
  }

  /** Number of unacked batches. */
  get size(): number {
    return this.batches.size - this.acked.size;
  }

  /** The core acked `id`: forget it, and delete its segment once every batch in it is acked. */
  ack(id: string): void {
    const entry = this.batches.get(id);
    if (!entry || this.acked.has(id)) return;
    this.acked.add(id);
    const seg = entry.segment;
    if (!seg.ids.every((x) => this.acked.has(x))) return;
    if (this.active?.segment === seg) {
      closeSync(this.active.fd);
      this.active = undefined;
    }
    rmSync(path.join(this.dir, seg.name), { force: true });
    fsyncDir(this.dir);
    this.segments.splice(this.segments.indexOf(seg), 1);
    for (const x of seg.ids) {
      this.batches.delete(x);
      this.acked.delete(x);
    }
  }

  /** Close the active segment file and release the lock. */
  close(): void {
    if (this.active) closeSync(this.active.fd);
    this.active = undefined;
    rmSync(path.join(this.dir, 'lock'), { force: true });
  }
}

/**
 * One process per spool: two collectors on one directory would read the same sources and spool
 * the same lines under different batch ids (counted twice). The lock holds the owner's pid; a lock
 * whose process is gone (a crash, SIGKILL) is taken over.
 */
function lockSpool(dir: string): void {
  const file = path.join(dir, 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (pid === process.pid) return;
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) throw new Error(`spool ${dir} is in use by process ${pid}`);
    rmSync(file, { force: true });
  }
  throw new Error(`cannot lock spool ${dir}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
