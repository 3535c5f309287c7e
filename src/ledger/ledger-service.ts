/**
 * The durable ledger as `svc serve` runs it: keyring in the data dir, worker pool holding the active
 * key, append pipeline, checkpointer, and stored-chain verification. Built once by the composition
 * root; routes reach it as `services.ledger`.
 */
import type { Store } from '../store/store-types.js';
import type { ExportSource } from '../workers/export-protocol.js';
import { createWorkerPool, type LedgerPool } from '../workers/pool.js';
import { verifyStoredChain } from './chain-verifier.js';
import { Checkpointer, type CheckpointResult } from './checkpointer.js';
import { Keyring, type KeyringOptions, type PublishedKey } from './keyring.js';
import { guardCommit } from './keyring-shared.js';
import { LedgerAuditSink } from './ledger-sink.js';
import { readHead, readRecords } from './ledger-store.js';
import type { RecordFilter } from './record-filter.js';
import { LedgerPipeline } from './pipeline.js';
import { chainHeads } from './rotation.js';
import type { AuditRecord } from './record.js';
import type { VerifyReport } from './verify.js';
import { outsideIntentScope, recoverScope, recoverStaleIntents, type IntentAppend, type IntentScope } from './audit-intent.js';
import { sql } from 'kysely';

/** How to open the ledger. */
export interface LedgerServiceOptions {
  store: Store;
  dataDir: string;
  /** Worker threads (default all cores); 0 signs and verifies on the main thread. */
  threads?: number;
  /** Checkpoint interval in ms; 0 disables the timer (default `SERVICE_AUDIT_CHECKPOINT_INTERVAL` seconds, else 60 s). */
  checkpointIntervalMs?: number;
  env?: Record<string, string | undefined>;
  keyring?: Omit<KeyringOptions, 'dataDir' | 'env'>;
  /** Largest append batch (default 512). */
  maxBatch?: number;
  /** Interval checkpoint failures go here (default: ignored). */
  onError?: (err: unknown) => void;
  /** Read-only source for verification workers (default: none, records are read on this thread). */
  source?: ExportSource;
  /**
   * Recovery of changes left without their audit record (audit-intent.ts): markers older than
   * `staleMs` (default 60 s, twice the default request deadline) are recorded every `intervalMs`
   * (default 30 s; 0 disables the timer). At open, a store with a single writer process (SQLite)
   * records all markers at once: no other process can have a request in flight.
   */
  intentRecovery?: { intervalMs?: number; staleMs?: number };
}

/** A page of `GET /v1/audit`. */
export interface AuditPage {
  items: AuditRecord[];
  has_more: boolean;
  head_seq: number;
  /** hex hash of record head_seq as the heads table holds it; null for an empty chain */
  head_hash: string | null;
  cursor?: string;
  /** why the chain takes no records (its head does not name its last stored record); absent when intact */
  damaged?: string;
}

/** The checkpoint interval from `SERVICE_AUDIT_CHECKPOINT_INTERVAL` (seconds; default 60; 0 disables). */
export function checkpointIntervalMs(env: Record<string, string | undefined>): number {
  const raw = env['SERVICE_AUDIT_CHECKPOINT_INTERVAL'];
  if (raw === undefined || raw.trim() === '') return 60_000;
  const s = Number(raw);
  if (!Number.isFinite(s) || s < 0)
    throw new RangeError(`SERVICE_AUDIT_CHECKPOINT_INTERVAL must be a number of seconds ≥ 0, got ${JSON.stringify(raw)}`);
  return Math.round(s * 1000);
}

/** The running ledger. */
export class LedgerService {
  readonly sink: LedgerAuditSink;

  private constructor(
    readonly store: Store,
    readonly keyring: Keyring,
    readonly pool: LedgerPool | null,
    readonly pipeline: LedgerPipeline,
    readonly checkpointer: Checkpointer,
    private readonly source: ExportSource | undefined,
  ) {
    this.sink = new LedgerAuditSink(pipeline);
  }

  #recoveryTimer: NodeJS.Timeout | undefined;
  #recovering: Promise<unknown> = Promise.resolve();
  readonly #intentAppend: IntentAppend = (tenant, draft, consumes) => this.pipeline.append(tenant, draft, consumes);

  /** At the end of a mutating request: its changes still without a record get a recovery record. */
  recoverScope(scope: IntentScope): Promise<number> {
    return recoverScope(this.store, this.#intentAppend, scope);
  }

  /** Records the changes whose markers are older than `staleMs` (left by a stopped process, or a refused append). */
  recoverStale(staleMs: number): Promise<number> {
    const run = this.#recovering.then(() => this.#recoverOnce(staleMs));
    this.#recovering = run.catch(() => undefined);
    return run;
  }

  /**
   * Replicas on one database recover one at a time (a transaction-scoped advisory lock, tried not
   * awaited): two replicas reading the same stale markers would each append their recovery record.
   * The one that does not get the lock skips this round; the markers it would have seen are gone
   * (or still stale, for the next round) by then.
   */
  #recoverOnce(staleMs: number): Promise<number> {
    if (!this.store.capabilities.supportsAdvisoryLocks) return recoverStaleIntents(this.store, this.#intentAppend, staleMs);
    return outsideIntentScope(() =>
      this.store.transaction(async (tx) => {
        const got = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtext(${'svc.audit.recovery'})) as ok`.execute(tx);
        if (got.rows[0]?.ok !== true) return 0;
        return recoverStaleIntents(this.store, this.#intentAppend, staleMs);
      }),
    );
  }

  /** Open the keyring (minting a key on first start), start the pool and the checkpoint timer. */
  static async open(opts: LedgerServiceOptions): Promise<LedgerService> {
    const env = opts.env ?? process.env;
    // A supplied key file that differs from the recorded active key retires the old one at the chain heads.
    // On a store shared by replicas (Postgres) the keyring is the deployment's, in the database (keyring-shared.ts).
    const keyring = await Keyring.open({
      chainHeads: () => chainHeads(opts.store),
      store: opts.store,
      ...opts.keyring,
      dataDir: opts.dataDir,
      env,
    });
    const threads = opts.threads;
    const pool =
      threads === 0 ? null : createWorkerPool({ ...(threads === undefined ? {} : { threads }), signingKeys: [keyring.signingKey()] });
    let checkpointer: Checkpointer | undefined;
    const pipeline = new LedgerPipeline({
      store: opts.store,
      signer: () => keyring.active,
      pool,
      ...(opts.maxBatch === undefined ? {} : { maxBatch: opts.maxBatch }),
      onCommit: (t, tail, recs) => checkpointer?.onCommit(t, tail, recs),
      ...(keyring.isShared ? { commitGuard: (tx) => guardCommit(tx, keyring.active.keyId) } : {}),
    });
    checkpointer = new Checkpointer(opts.store, pipeline);
    const svc = new LedgerService(opts.store, keyring, pool, pipeline, checkpointer, opts.source);
    checkpointer.start(opts.checkpointIntervalMs ?? checkpointIntervalMs(env), opts.onError ?? (() => {}));
    const staleMs = opts.intentRecovery?.staleMs ?? 60_000;
    await svc.recoverStale(opts.store.capabilities.supportsConcurrentWriters ? staleMs : 0);
    const every = opts.intentRecovery?.intervalMs ?? 30_000;
    if (every > 0) {
      svc.#recoveryTimer = setInterval(() => void svc.recoverStale(staleMs).catch(opts.onError ?? (() => {})), every);
      svc.#recoveryTimer.unref();
    }
    return svc;
  }

  /** Append one record; resolves once durable. */
  append: LedgerAuditSink['append'] = (tenant, draft, events) => this.pipeline.append(tenant, draft, undefined, events);

  /** A page of one chain from seq `from` (ascending), with the chain's head seq. */
  async read(tenant: string, from: number, limit: number, filter: RecordFilter = {}): Promise<AuditPage> {
    const { rows, head } = await this.store.withTenant(tenant, async (tx) => ({
      rows: await readRecords(tx, tenant, from, limit + 1, filter),
      head: await readHead(tx, tenant),
    }));
    const has_more = rows.length > limit;
    const items = has_more ? rows.slice(0, limit) : rows;
    const page: AuditPage = { items, has_more, head_seq: head?.seq ?? 0, head_hash: head?.hash ?? null };
    const last = items[items.length - 1];
    if (has_more && last !== undefined) page.cursor = String(last.seq + 1);
    return page;
  }

  /** Verify a stored chain against the keyring's published keys (seq ranges included). */
  async verify(tenant: string, from = 1, signatures = true): Promise<VerifyReport> {
    await this.keyring.refresh();
    return verifyStoredChain(this.store, tenant, {
      from,
      keys: this.keyring.keySet(tenant),
      signatures,
      pool: this.pool,
      ...(this.source ? { source: this.source } : {}),
    });
  }

  /** `GET /v1/audit/pubkey`. */
  async publishedKeys(tenant: string): Promise<{ keys: PublishedKey[] }> {
    // Replicas on one database publish the same keys, a rotation by another process included.
    await this.keyring.refresh();
    return this.keyring.publishedKeys(tenant);
  }

  /** On demand: checkpoint every chain. */
  checkpointAll(): Promise<CheckpointResult[]> {
    return this.checkpointer.checkpointAll();
  }

  /** Stop the timer, settle accepted appends, stop the pool. */
  async close(): Promise<void> {
    clearInterval(this.#recoveryTimer);
    await this.#recovering;
    await this.checkpointer.stop();
    await this.pipeline.close();
    await this.pool?.close();
  }
}
