/**
 * Group commit for the store half of ingest (ingest-commit.ts, step 1). Batches of every stream of
 * one tenant that arrive while that tenant's store transaction is running wait, and the next
 * transaction takes them all. SQLite has a single writer and syncs on every commit
 * (synchronous=FULL), so one commit per group instead of one per batch divides that cost by the
 * group size. Each batch still gets its own result, and no result is handed out before the
 * group's transaction has committed. If a group's transaction fails, each of its batches is tried
 * again alone. One batch's failure (for example a unique violation caused by another replica) so
 * stays its own.
 *
 * The same transaction also writes the `ledger_seq` notes collected since the previous one
 * (`note`). A note only caches where a batch's ledger record is, so it can wait for the next
 * group (ingest-commit.ts `finishLedger`). When no group follows, a flush of its own writes the
 * notes after `NOTE_FLUSH_MS`.
 */

/**
 * Most items one transaction takes (at least one batch, whatever its size); the rest wait for the
 * next one. Past a few thousand items the commit cost is already spread thin, and a bigger group
 * only makes every batch in it wait for the slowest part.
 */
export const MAX_GROUP_ITEMS = 2_000;
/** How long notes wait for a group to carry them before a transaction of their own writes them. */
export const NOTE_FLUSH_MS = 50;

/** Commits the store half of `jobs` (possibly none) and the `notes` in one tenant transaction; results in job order. */
export type GroupCommit<J, R> = (tenant: string, jobs: J[], notes: Map<string, number>) => Promise<R[]>;

interface Waiting<J, R> {
  job: J;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

interface TenantQueue<J, R> {
  waiting: Array<Waiting<J, R>>;
  notes: Map<string, number>;
  running: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** One tenant transaction at a time, each taking every batch that queued up meanwhile. */
export class StoreGroups<J, R> {
  readonly #tenants = new Map<string, TenantQueue<J, R>>();

  /** `size` gives a job's item count. */
  constructor(
    private readonly commit: GroupCommit<J, R>,
    private readonly size: (job: J) => number,
  ) {}

  /** Queue one batch; resolves once the transaction that carried it has committed. */
  submit(tenant: string, job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const q = this.#queue(tenant);
      q.waiting.push({ job, resolve, reject });
      if (!q.running) void this.#run(tenant, q);
    });
  }

  /** Remember that `batchId`'s ledger record is at `seq`; written with the next group. */
  note(tenant: string, batchId: string, seq: number): void {
    const q = this.#queue(tenant);
    q.notes.set(batchId, seq);
    if (!q.running) this.#flushLater(tenant, q);
  }

  #queue(tenant: string): TenantQueue<J, R> {
    let q = this.#tenants.get(tenant);
    if (!q) {
      q = { waiting: [], notes: new Map(), running: false, timer: undefined };
      this.#tenants.set(tenant, q);
    }
    return q;
  }

  #flushLater(tenant: string, q: TenantQueue<J, R>): void {
    if (q.timer) return;
    q.timer = setTimeout(() => {
      q.timer = undefined;
      if (!q.running) void this.#run(tenant, q);
    }, NOTE_FLUSH_MS);
    q.timer.unref();
  }

  async #run(tenant: string, q: TenantQueue<J, R>): Promise<void> {
    q.running = true;
    clearTimeout(q.timer);
    q.timer = undefined;
    do {
      let take = 0;
      for (
        let items = 0;
        take < q.waiting.length && (take === 0 || items + this.size((q.waiting[take] as Waiting<J, R>).job) <= MAX_GROUP_ITEMS);
        take++
      )
        items += this.size((q.waiting[take] as Waiting<J, R>).job);
      const group = q.waiting.splice(0, take);
      const notes = q.notes;
      q.notes = new Map();
      try {
        const results = await this.commit(tenant, group.map((w) => w.job), notes);
        group.forEach((w, i) => w.resolve(results[i] as R));
      } catch (err) {
        // Lost notes only cost a lookup on a re-send (ingest-commit.ts), so they are not retried.
        if (group.length <= 1) group.forEach((w) => w.reject(err));
        else for (const w of group) await this.commit(tenant, [w.job], new Map()).then((r) => w.resolve(r[0] as R), w.reject);
      }
      // Notes alone do not start another transaction at once: the next group will likely carry them.
    } while (q.waiting.length > 0);
    q.running = false;
    if (q.notes.size > 0) this.#flushLater(tenant, q);
    else this.#tenants.delete(tenant);
  }
}
