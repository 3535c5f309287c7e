/**
 * The append pipeline (issue 4): per-chain queue, group commit, signing in the worker pool.
 *
 * For each chain, appends queue up; a batch (up to `maxBatch` drafts) is linked and hashed on this
 * thread from the chain's tail (`hashBatch`), signed (`signHashes`: in the pool, or on this thread
 * when the batch is small), then committed with the new head in one transaction, and its appends
 * resolve once that commit is on disk (SQLite: the WAL fsync off the main thread, which the next
 * batch does not wait for). Batching adapts by
 * itself: a lone append starts a batch at once (next microtask); while batches are signing or
 * committing, new appends pile up and the next batch takes them all; a deep queue met from idle is
 * cut in two so the halves overlap. Up to `maxInFlight` batches of a chain overlap (one commits
 * while the next is being signed), each hashed on the optimistic tail of the one before.
 *
 * Honesty: the commit transaction takes the chain lock (Postgres: `pg_advisory_xact_lock`; SQLite:
 * the database's single writer via BEGIN IMMEDIATE) and re-reads the head; if another process moved
 * it (or an earlier batch failed), the batch is re-sealed on the real head inside the lock. The
 * primary key (tenant_id, seq) is the backstop. A failed commit rejects every append of its batch;
 * nothing is resolved before its transaction committed.
 *
 * Replicas (Postgres): when another process has moved a chain's head, that chain's batches are
 * sealed under its lock for a while instead of ahead of it, one batch at a time: a batch sealed
 * ahead would be sealed twice whenever another replica commits in between, which is most of the
 * time while two replicas write one chain (docs/scale-out.md).
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store-types.js';
import type { LedgerPool } from '../workers/pool.js';
import { applySignatures, hashBatch, signHashes, type ChainTail, type HashedBatch } from './chain.js';
import { assertHeadConsistent } from './chain-head.js';
import { insertRecords, readHead } from './ledger-store.js';
import { sqliteAssertHeadConsistent, sqliteInsertRecords, sqliteReadHead } from './sqlite-append.js';
import type { AuditDraft, AuditRecord } from './record.js';
import type { Signer } from './signers.js';
import { consumeIntents, outsideIntentScope, sqliteConsumeIntents } from './audit-intent.js';
import { appendEvents, sqliteAppendEvents } from '../events/event-log.js';
import type { BusEvent } from '../events/event-types.js';

/** How the pipeline runs. */
export interface PipelineOptions {
  store: Store;
  /** The active signer (the keyring's); read per batch. */
  signer: () => Signer;
  /** Pool whose workers hold the active key; null signs on this thread. */
  pool: LedgerPool | null;
  /** Largest batch (default 512). */
  maxBatch?: number;
  /** Batches of one chain in flight at once (default 3). */
  maxInFlight?: number;
  /** Called after each commit with the chain's new tail (checkpointer bookkeeping). */
  onCommit?: (tenant: string, tail: ChainTail, records: readonly AuditRecord[]) => void;
  /** Postgres: run inside each commit's transaction after the chain lock (the shared keyring's check: keyring-shared.ts). */
  commitGuard?: (tx: Transaction<Database>) => Promise<void>;
}

/** Smallest slice of a batch sent to one signing thread (smaller is not worth a message round trip). */
const SPLIT_MIN = 8;
/**
 * A batch up to this size with no other batch of its chain in flight is signed on this thread: for a
 * lone append a pool round trip (two thread wake-ups) costs more than its signing. Under load the
 * pool signs every batch, so signing never takes the main thread from hashing and commits.
 */
const SIGN_HERE_MAX = 2 * SPLIT_MIN;
/** Appends queued from idle from which the queue is cut into two batches (see #pump). */
const SPLIT_QUEUE = 4 * SPLIT_MIN;
/** How long a chain's batches are sealed under its lock after another process moved its head. */
const SHARED_CHAIN_MS = 2_000;

interface Pending {
  draft: AuditDraft;
  /** a request's intent scope whose markers this record's commit deletes (audit-intent.ts) */
  consumes: string | undefined;
  /** stamped events written to the event log in this record's commit */
  events: BusEvent[] | undefined;
  resolve: (r: AuditRecord) => void;
  reject: (err: unknown) => void;
}

interface Batch {
  pending: Pending[];
  prev: ChainTail | null;
  /** undefined: sealed in its commit, on the head read under the chain lock */
  hashed: HashedBatch | undefined;
  signed: Promise<AuditRecord[]> | undefined;
}

/** Drafts that could not be sealed (inside a commit); the batch is split as in #rejectMalformed. */
class UnsealableDrafts extends Error {
  constructor(readonly reason: unknown) {
    super('a draft of the batch cannot be sealed');
  }
}

interface Chain {
  tenant: string;
  queue: Pending[];
  /** optimistic tail after the last hashed batch; undefined until read from the heads table */
  tail: ChainTail | null | undefined;
  loading: boolean;
  inflight: Batch[];
  committing: boolean;
  /** committed batches waiting for their commit to be on disk */
  settling: number;
  idle: Array<() => void>;
  /** until when (performance.now()) batches are sealed under the chain lock: another process writes this chain */
  sharedUntil: number;
}

/** Thrown to appends once the pipeline is closed. */
export class PipelineClosedError extends Error {
  override readonly name = 'PipelineClosedError';
  constructor() {
    super('audit pipeline is closed');
  }
}

/** The durable append path of the ledger. */
export class LedgerPipeline {
  readonly #chains = new Map<string, Chain>();
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  #closed = false;

  constructor(private readonly opts: PipelineOptions) {
    this.#maxBatch = Math.max(1, opts.maxBatch ?? 512);
    this.#maxInFlight = Math.max(1, opts.maxInFlight ?? 3);
  }

  /**
   * Append one draft to `tenant`'s chain; resolves with the record once it is committed. `consumes`
   * names a request's intent scope: its change markers are deleted in the record's commit. `events`
   * (stamped) are written to the durable event log in that same commit, their `sequence` set.
   */
  append(tenant: string, draft: AuditDraft, consumes?: string, events?: BusEvent[]): Promise<AuditRecord> {
    if (this.#closed) return Promise.reject(new PipelineClosedError());
    return new Promise<AuditRecord>((resolve, reject) => {
      const chain = this.#chain(tenant);
      chain.queue.push({ draft, consumes, events, resolve, reject });
      // Start on the next microtask, so appends issued in the same tick share a batch.
      if (chain.queue.length === 1) queueMicrotask(() => this.#pump(chain));
    });
  }

  /** Resolves once every append accepted so far has settled. */
  async flush(): Promise<void> {
    await Promise.all([...this.#chains.values()].map((c) => this.#whenIdle(c)));
  }

  /** Stop accepting appends and wait for the accepted ones to settle. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  /** Chains this pipeline has appended to (tenant ids). */
  chains(): string[] {
    return [...this.#chains.keys()];
  }

  #chain(tenant: string): Chain {
    let c = this.#chains.get(tenant);
    if (c === undefined) {
      c = { tenant, queue: [], tail: undefined, loading: false, inflight: [], committing: false, settling: 0, idle: [], sharedUntil: 0 };
      this.#chains.set(tenant, c);
    }
    return c;
  }

  #whenIdle(c: Chain): Promise<void> {
    if (c.queue.length === 0 && c.inflight.length === 0 && !c.loading && c.settling === 0) return Promise.resolve();
    return new Promise((resolve) => c.idle.push(resolve));
  }

  #settleIdle(c: Chain): void {
    if (c.queue.length === 0 && c.inflight.length === 0 && !c.loading && c.settling === 0) {
      const waiters = c.idle.splice(0);
      for (const w of waiters) w();
    }
  }

  #pump(c: Chain): void {
    if (this.#sealsUnderLock(c)) {
      // One batch at a time, sealed in its commit: whatever queued meanwhile is the next batch.
      if (c.inflight.length === 0 && c.queue.length > 0) {
        c.inflight.push({ pending: c.queue.splice(0, this.#maxBatch), prev: null, hashed: undefined, signed: undefined });
      }
      void this.#commitNext(c);
      return;
    }
    if (c.tail === undefined) {
      if (!c.loading && c.queue.length > 0) void this.#loadTail(c);
      return;
    }
    while (c.queue.length > 0 && c.inflight.length < this.#maxInFlight) {
      // From idle, a deep queue is cut in two: one half signs while the other is hashed, and later
      // commits while the other signs. The appenders of each half re-append while the other half's
      // batch is in flight, so the two groups keep alternating. Measured with 64 closed-loop
      // appenders (bench ledger-append): +20–30% with libsodium signing; with node:crypto, whose
      // signing is ~1.6x slower, it was no better, and a lone append is never cut.
      const take = c.inflight.length === 0 && c.queue.length >= SPLIT_QUEUE ? Math.ceil(c.queue.length / 2) : this.#maxBatch;
      const pending = c.queue.splice(0, Math.min(take, this.#maxBatch));
      const prev = c.tail;
      let hashed: HashedBatch;
      try {
        hashed = hashBatch(
          prev,
          c.tenant,
          pending.map((p) => p.draft),
          this.opts.signer(),
        );
      } catch (err) {
        // A malformed draft fails its own batch only; split so one bad draft does not fail the others.
        this.#rejectMalformed(c, pending, err);
        continue;
      }
      c.tail = hashed.tail;
      const signed = this.#sign(hashed, c.inflight.length === 0 && c.settling === 0);
      // Errors are handled at commit; keep an early rejection from being reported as unhandled.
      signed.catch(() => {});
      c.inflight.push({ pending, prev, hashed, signed });
    }
    void this.#commitNext(c);
  }

  /** Postgres, while another process writes this chain (see the module comment). */
  #sealsUnderLock(c: Chain): boolean {
    return c.sharedUntil !== 0 && this.opts.store.capabilities.supportsAdvisoryLocks && performance.now() < c.sharedUntil;
  }

  /** Reject the drafts that cannot be sealed; re-queue the others at the front, in order. */
  #rejectMalformed(c: Chain, pending: Pending[], err: unknown): void {
    if (pending.length === 1) {
      (pending[0] as Pending).reject(err);
      return;
    }
    const signer = this.opts.signer();
    const good: Pending[] = [];
    // Dry-run each draft at the position it would take (a checkpoint needs a record before it).
    let tail = c.tail ?? null;
    for (const p of pending) {
      try {
        tail = hashBatch(tail, c.tenant, [p.draft], signer).tail;
        good.push(p);
      } catch (e) {
        p.reject(e);
      }
    }
    // Every draft passing alone cannot happen (same checks); refuse rather than loop.
    if (good.length === pending.length) {
      for (const p of good) p.reject(err);
      return;
    }
    c.queue.unshift(...good);
  }

  async #sign(b: HashedBatch, alone: boolean): Promise<AuditRecord[]> {
    const signer = this.opts.signer();
    const pool = this.opts.pool;
    const n = b.hashes.length / 32;
    if (pool === null || (alone && n <= SIGN_HERE_MAX)) return applySignatures(b, signHashes(signer, b.tenant, b.firstSeq, b.hashes));
    // A batch is split across the pool's threads: its latency (what every append of it waits) is
    // the slice's, not the whole batch's signing time on one core.
    const parts = n >= SPLIT_MIN * 2 ? Math.min(pool.threads, Math.floor(n / SPLIT_MIN)) : 1;
    const per = Math.ceil(n / parts);
    const slices: Array<Promise<{ sigLength: number; sigs: Uint8Array }>> = [];
    for (let i = 0; i < n; i += per) {
      const end = Math.min(n, i + per);
      slices.push(
        pool.signBatch({ keyId: signer.keyId, tenant: b.tenant, firstSeq: b.firstSeq + i, hashes: b.hashes.subarray(32 * i, 32 * end) }),
      );
    }
    const res = await Promise.all(slices);
    const sigLength = res[0]?.sigLength ?? 0;
    if (res.some((r) => r.sigLength !== sigLength)) throw new Error('signature length changed within a batch');
    // Structured clone hands back plain Uint8Arrays; applySignatures needs Buffer's base64 slicing.
    const sigs = Buffer.concat(res.map((r) => r.sigs));
    return applySignatures(b, { sigLength, sigs });
  }

  async #loadTail(c: Chain): Promise<void> {
    c.loading = true;
    try {
      // The ledger's transactions are never a request's change (audit-intent.ts).
      c.tail = await outsideIntentScope(() => this.opts.store.withTenant(c.tenant, (tx) => readHead(tx, c.tenant)));
    } catch (err) {
      for (const p of c.queue.splice(0)) p.reject(err);
    } finally {
      c.loading = false;
    }
    if (c.tail !== undefined) this.#pump(c);
    this.#settleIdle(c);
  }

  async #commitNext(c: Chain): Promise<void> {
    if (c.committing) return;
    c.committing = true;
    try {
      while (c.inflight.length > 0) {
        const b = c.inflight[0] as Batch;
        let records: AuditRecord[];
        let tail: ChainTail;
        let durable: Promise<void>;
        try {
          const signed = b.signed;
          if (signed === undefined) ({ records, tail, durable } = await outsideIntentScope(() => this.#commitSealing(c, b)));
          else {
            records = await signed;
            ({ records, tail, durable } = await outsideIntentScope(() => this.#commit(c, b, records)));
          }
        } catch (err) {
          c.inflight.shift();
          if (err instanceof UnsealableDrafts) {
            this.#rejectMalformed(c, b.pending, err.reason);
            continue;
          }
          for (const p of b.pending) p.reject(err);
          // Later batches were hashed on this one; the head check re-seals them on the real head.
          if (c.inflight.length === 0) c.tail = undefined;
          continue;
        }
        c.inflight.shift();
        if (c.inflight.length === 0) c.tail = tail;
        // Committed: the next batch may commit on top of it now; its appends hear of it once it is on
        // disk (SQLite: the WAL's fsync runs off the main thread, store/sqlite/wal-sync.ts). A failed
        // fsync fails the store for good, so no later batch is acknowledged either.
        c.settling++;
        durable
          .then(
            () => {
              for (let i = 0; i < b.pending.length; i++) (b.pending[i] as Pending).resolve(records[i] as AuditRecord);
              this.opts.onCommit?.(c.tenant, tail, records);
            },
            (err: unknown) => {
              for (const p of b.pending) p.reject(err);
            },
          )
          .finally(() => {
            c.settling--;
            this.#settleIdle(c);
          });
        // Room for another batch in flight: take what queued up meanwhile.
        if (c.queue.length > 0) this.#pump(c);
      }
    } finally {
      c.committing = false;
    }
    if (c.queue.length > 0) this.#pump(c);
    this.#settleIdle(c);
  }

  /** One transaction: lock the chain, check the head, re-seal if it moved, insert, move the head. */
  async #commit(
    c: Chain,
    b: Batch,
    signed: AuditRecord[],
  ): Promise<{ records: AuditRecord[]; tail: ChainTail; durable: Promise<void> }> {
    const store = this.opts.store;
    const tenant = c.tenant;
    const hashed = b.hashed as HashedBatch;
    const { consumed, events } = batchExtras(b);
    if (store.sqlite !== undefined) {
      // SQLite: BEGIN IMMEDIATE holds the file's only write lock, so the head cannot move meanwhile.
      const { value, durable } = await store.sqlite.commit((db) => {
        const head = sqliteReadHead(db, tenant);
        // A head that does not name the last stored record was changed behind the ledger: sealing on
        // it would bake a false link into the chain, so the batch fails instead.
        sqliteAssertHeadConsistent(db, tenant);
        const sealed = sameTail(head, b.prev) ? { records: signed, tail: hashed.tail } : this.#reseal(tenant, b, signed, head);
        sqliteInsertRecords(db, tenant, sealed.records, head);
        sqliteConsumeIntents(db, consumed);
        sqliteAppendEvents(db, events);
        return sealed;
      });
      return { ...value, durable };
    }
    const committed = await store.withTenant(tenant, async (tx) => {
      const head = await this.#lockedHead(tx, tenant);
      let sealed = { records: signed, tail: hashed.tail };
      if (!sameTail(head, b.prev)) {
        sealed = this.#reseal(tenant, b, signed, head);
        // Another process moved the head (or a batch of ours failed): seal under the lock for a while.
        c.sharedUntil = performance.now() + SHARED_CHAIN_MS;
      }
      await this.#write(tx, tenant, sealed.records, head, consumed, events);
      return sealed;
    });
    return { ...committed, durable: Promise.resolve() };
  }

  /** Postgres, chain written by another process too: one transaction locks the chain, seals on its head, signs and inserts. */
  async #commitSealing(c: Chain, b: Batch): Promise<{ records: AuditRecord[]; tail: ChainTail; durable: Promise<void> }> {
    const store = this.opts.store;
    const tenant = c.tenant;
    const { consumed, events } = batchExtras(b);
    const committed = await store.withTenant(tenant, async (tx) => {
      const head = await this.#lockedHead(tx, tenant);
      let hashed: HashedBatch;
      try {
        hashed = hashBatch(
          head,
          tenant,
          b.pending.map((p) => p.draft),
          this.opts.signer(),
        );
      } catch (err) {
        throw new UnsealableDrafts(err);
      }
      const records = await this.#sign(hashed, true);
      await this.#write(tx, tenant, records, head, consumed, events);
      return { records, tail: hashed.tail, movedByOthers: !sameTail(head, c.tail ?? null) };
    });
    c.tail = committed.tail;
    // Still shared while another process moves the head between our commits; alone again once it stops.
    if (committed.movedByOthers) c.sharedUntil = performance.now() + SHARED_CHAIN_MS;
    return { records: committed.records, tail: committed.tail, durable: Promise.resolve() };
  }

  /** Postgres: the chain's lock (one writer per chain across every process on the database), the guard, the head read and checked. */
  async #lockedHead(tx: Transaction<Database>, tenant: string): Promise<ChainTail | null> {
    if (this.opts.store.capabilities.supportsAdvisoryLocks) {
      await sql`select pg_advisory_xact_lock(hashtext(${'svc.audit:' + tenant}))`.execute(tx);
    }
    await this.opts.commitGuard?.(tx);
    const head = await readHead(tx, tenant);
    await assertHeadConsistent(tx, tenant);
    return head;
  }

  async #write(
    tx: Transaction<Database>,
    tenant: string,
    records: AuditRecord[],
    head: ChainTail | null,
    consumed: string[],
    events: BusEvent[],
  ): Promise<void> {
    await insertRecords(tx, tenant, records, head);
    await consumeIntents(tx, consumed);
    if (events.length > 0) {
      const seqs = new Map((await appendEvents(tx, events)).map((e) => [e.id, e.sequence]));
      for (const e of events) e.sequence = seqs.get(e.id);
    }
  }

  /** Sealed on a stale tail (another writer, or a failed batch before): seal again on the real head, keeping each draft's time. */
  #reseal(tenant: string, b: Batch, signed: AuditRecord[], head: ChainTail | null): { records: AuditRecord[]; tail: ChainTail } {
    const drafts = b.pending.map((p, i) => ({ ...p.draft, occurred_at: (signed[i] as AuditRecord).occurred_at }));
    const signer = this.opts.signer();
    const again = hashBatch(head, tenant, drafts, signer);
    return { records: applySignatures(again, signHashes(signer, tenant, again.firstSeq, again.hashes)), tail: again.tail };
  }
}

/** The intent scopes a batch's commit consumes and the events it writes. */
function batchExtras(b: Batch): { consumed: string[]; events: BusEvent[] } {
  return {
    consumed: [...new Set(b.pending.map((p) => p.consumes).filter((s): s is string => s !== undefined))],
    events: b.pending.flatMap((p) => p.events ?? []),
  };
}

function sameTail(a: ChainTail | null, b: ChainTail | null): boolean {
  if (a === null || b === null) return a === b;
  return a.seq === b.seq && a.hash === b.hash;
}
