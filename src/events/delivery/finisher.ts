/**
 * Writes attempt outcomes back in batches across lanes: every lane hands its finishes here as they
 * come, and one transaction per tenant writes all that arrived while the previous write ran (the
 * same shape as the SQLite store's group commit, one level up: a hundred lanes that each finished
 * one delivery cost one transaction and a handful of UPDATEs, not a hundred).
 */
import type { Store } from '../../store/store.js';
import { finishBatch, type Finish } from './delivery-batch.js';
import type { DeliveryStatus } from './delivery-store.js';

type Result = DeliveryStatus | 'released';

/** How long finishes gather before a write. */
const FLUSH_DELAY_MS = 25;

interface Pending {
  tenant: string;
  list: Finish[];
  resolve: (m: Map<string, Result>) => void;
  reject: (err: unknown) => void;
}

export class Finisher {
  readonly #store: Store;
  #queue: Pending[] = [];
  #running: Promise<void> | undefined;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Resolves once the finishes are committed, with each delivery's new status. */
  finish(tenant: string, list: Finish[]): Promise<Map<string, Result>> {
    if (list.length === 0) return Promise.resolve(new Map());
    return new Promise((resolve, reject) => {
      this.#queue.push({ tenant, list, resolve, reject });
      this.#running ??= this.#drain();
    });
  }

  async #drain(): Promise<void> {
    try {
      // A few ms first: the finishes of lanes answered meanwhile join (lanes wait for them only at the end of a claim).
      await new Promise<void>((r) => setTimeout(r, FLUSH_DELAY_MS));
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        const byTenant = new Map<string, Pending[]>();
        for (const p of batch) {
          const list = byTenant.get(p.tenant);
          if (list) list.push(p);
          else byTenant.set(p.tenant, [p]);
        }
        await Promise.all(
          [...byTenant].map(async ([tenant, ps]) => {
            try {
              const all = await this.#store.withTenant(tenant, (tx) => finishBatch(tx, tenant, ps.flatMap((p) => p.list)));
              for (const p of ps) p.resolve(new Map(p.list.map((f) => [f.id, all.get(f.id) as Result])));
            } catch (err) {
              for (const p of ps) p.reject(err);
            }
          }),
        );
      }
    } finally {
      this.#running = undefined;
      if (this.#queue.length > 0) this.#running = this.#drain();
    }
  }

  /** Resolves when nothing is waiting to be written. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }
}
