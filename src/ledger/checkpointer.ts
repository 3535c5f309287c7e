/**
 * Writes `audit.checkpoint` records (DECISIONS.md "Audit ledger"; checkpoint.ts): on an interval for
 * every chain that moved since its last checkpoint, and on demand for every chain (each tenant's and
 * the system chain). A checkpoint attests the record right before it, so a chain whose last record
 * already is a checkpoint, or that is empty, gets none.
 */
import type { Store } from '../store/store-types.js';
import { CHECKPOINT_ACTION, checkpointDraft } from './checkpoint.js';
import type { ChainTail } from './chain.js';
import { readHead } from './ledger-store.js';
import type { LedgerPipeline } from './pipeline.js';
import { SYSTEM_TENANT, type AuditRecord } from './record.js';

/** One checkpoint written. */
export interface CheckpointResult {
  tenant: string;
  /** seq of the checkpoint record */
  seq: number;
  attested_seq: number;
}

/** Interval and on-demand checkpoints over a pipeline. */
export class Checkpointer {
  /** chains whose last committed record is not a checkpoint */
  readonly #moved = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly pipeline: LedgerPipeline,
  ) {}

  /** Pipeline hook (PipelineOptions.onCommit): remember which chains moved. */
  readonly onCommit = (tenant: string, _tail: ChainTail, records: readonly AuditRecord[]): void => {
    const last = records[records.length - 1];
    if (last === undefined) return;
    if (last.action === CHECKPOINT_ACTION) this.#moved.delete(tenant);
    else this.#moved.add(tenant);
  };

  /** Checkpoint the chains that moved, every `intervalMs` (the timer does not keep the process alive). */
  start(intervalMs: number, onError: (err: unknown) => void): void {
    this.stop();
    if (!(intervalMs > 0)) return;
    let busy = false;
    this.#timer = setInterval(() => {
      // A round still appending (a slow commit) is not joined by another: both would checkpoint the same move.
      if (busy) return;
      busy = true;
      this.#running = this.checkpointMoved()
        .catch(onError)
        .finally(() => {
          busy = false;
        });
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stop the interval and wait for a running round. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Checkpoint every chain that moved since its last checkpoint. */
  async checkpointMoved(): Promise<CheckpointResult[]> {
    const tenants = [...this.#moved];
    return this.#write(tenants);
  }

  /** Checkpoint every chain: tenants of the tenants table, the system chain, and chains this process wrote. */
  async checkpointAll(): Promise<CheckpointResult[]> {
    const rows = await this.store.transaction((tx) => tx.selectFrom('tenants').select('id').execute());
    const tenants = new Set<string>([SYSTEM_TENANT, ...rows.map((r) => r.id), ...this.pipeline.chains()]);
    return this.#write([...tenants]);
  }

  async #write(tenants: string[]): Promise<CheckpointResult[]> {
    const out: CheckpointResult[] = [];
    await Promise.all(
      tenants.map(async (tenant) => {
        const head: ChainTail | null = await this.store.withTenant(tenant, (tx) => readHead(tx, tenant));
        if (head === null) return;
        // Appends may be queued behind the head we read; the checkpoint attests whatever precedes it.
        const rec = await this.pipeline.append(tenant, checkpointDraft());
        const prev = rec.seq - 1;
        out.push({ tenant, seq: rec.seq, attested_seq: prev });
      }),
    );
    return out.sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
  }
}
