/**
 * How modules react to another module's records without touching its tables: a module's manifest
 * registers hooks on an action (`delete`, `erase`) of a kind of record (`agent`, `workspace`,
 * `token`, `user`…). Guards run first and may veto by throwing an ApiError (a legal hold answers
 * 409 `legal_hold`); cascades then run inside the owner's transaction, so their work commits or
 * rolls back with the change itself.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store-types.js';

export type RecordAction = 'delete' | 'erase';

/** What a hook learns: the record, inside the transaction that changes it. */
export interface RecordHookContext {
  store: Store;
  tx: Transaction<Database>;
  tenant: string;
  kind: string;
  id: string;
  /** the record as it was before the action */
  record: Readonly<Record<string, unknown>>;
}

export interface RecordHookDecl {
  action: RecordAction;
  kind: string;
  /** guard: may throw to refuse the action; cascade: follows the action in the same transaction */
  phase: 'guard' | 'cascade';
  /** names the hook in errors and docs (`accessmap.forget-agent-edges`) */
  name: string;
  run(ctx: RecordHookContext): Promise<void>;
}

/** The hooks every manifest declared, looked up by action and kind. */
export class RecordHooks {
  readonly #byKey = new Map<string, RecordHookDecl[]>();

  constructor(decls: readonly RecordHookDecl[] = []) {
    for (const d of decls) {
      const key = `${d.action} ${d.kind}`;
      const list = this.#byKey.get(key) ?? [];
      list.push(d);
      this.#byKey.set(key, list);
    }
  }

  /** Runs every guard, then every cascade, of `action` on `ctx.kind`; a guard's throw stops it all. */
  async run(action: RecordAction, ctx: RecordHookContext): Promise<void> {
    const list = this.#byKey.get(`${action} ${ctx.kind}`) ?? [];
    for (const h of list) if (h.phase === 'guard') await h.run(ctx);
    for (const h of list) if (h.phase === 'cascade') await h.run(ctx);
  }

  list(): RecordHookDecl[] {
    return [...this.#byKey.values()].flat();
  }
}
