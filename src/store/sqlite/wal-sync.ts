/**
 * Durable commits without blocking the event loop (docs/perf/request-path.md).
 *
 * better-sqlite3 runs on the main thread: with `synchronous=FULL`, every COMMIT fsyncs the WAL
 * inside the call, and the whole process waits for the disk (2–5 ms per commit measured on the
 * 2-core reference machine, where that was half of the main thread's time under an audited-write
 * load). So the store runs svc.db at `synchronous=NORMAL` (a COMMIT only write()s its WAL frames) and
 * fsyncs the `-wal` file itself, on libuv's thread pool, before it settles any caller of a commit:
 * what the caller is told committed has reached the disk, as with FULL, while the main thread already
 * runs the next group. One fsync covers every commit whose frames were written before it started, so
 * commits that land while one fsync runs share the next one.
 *
 * Why fsyncing the WAL is enough: a commit's frames are either still in the WAL (this fsync made
 * them durable) or a checkpoint has copied them into svc.db, and under NORMAL SQLite fsyncs the WAL
 * before and svc.db after each checkpoint (https://sqlite.org/pragma.html#pragma_synchronous). The
 * WAL file is never replaced while the store's connection is open (the last connection to close
 * removes it), so one descriptor opened on it stays valid. A failed fsync leaves the page cache's
 * state unknown (a later fsync may succeed without the lost pages): the store refuses every later
 * commit ({@link WalSync.failed}) instead of acknowledging on top of it.
 */
import { fsync, openSync, closeSync } from 'node:fs';

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Coalescing asynchronous fsync of one file (the store's `svc.db-wal`). */
export class WalSync {
  #fd: number | undefined;
  #running = false;
  #next: Waiter[] = [];
  #failure: Error | undefined;
  /** fsyncs completed (for tests and the study's figures) */
  syncs = 0;

  constructor(private readonly path: string) {}

  /** Set once an fsync failed: nothing committed after it may be acknowledged. */
  get failed(): Error | undefined {
    return this.#failure;
  }

  /** Resolves once an fsync that started after this call has completed (every write before the call is on disk). */
  sync(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise<void>((resolve, reject) => {
      this.#next.push({ resolve, reject });
      if (!this.#running) this.#run();
    });
  }

  #run(): void {
    this.#running = true;
    const batch = this.#next;
    this.#next = [];
    let fd: number;
    try {
      fd = this.#fd ??= openSync(this.path, 'r');
    } catch (err) {
      this.#fail(batch, err);
      return;
    }
    fsync(fd, (err) => {
      if (err) return this.#fail(batch, err);
      this.syncs++;
      for (const w of batch) w.resolve();
      if (this.#next.length > 0) this.#run();
      else this.#running = false;
    });
  }

  #fail(batch: Waiter[], err: unknown): void {
    this.#failure = new Error(`fsync of ${this.path} failed: ${(err as Error).message ?? String(err)}; the store refuses further commits`);
    for (const w of [...batch, ...this.#next.splice(0)]) w.reject(this.#failure);
    this.#running = false;
  }

  /** Waits for a running fsync, then closes the descriptor. */
  async close(): Promise<void> {
    if (this.#running) await this.sync().catch(() => undefined);
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}
