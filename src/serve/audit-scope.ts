/**
 * The audit intent scope of mutating requests (ledger/audit-intent.ts): the handler runs in a
 * scope, so each transaction it commits also writes a marker and its audit record's commit deletes
 * them; when the handler has settled, markers still present (the handler failed after committing,
 * or the ledger refused its append) become an `audit.recovered_after_failure` record at once.
 */
import type { Logger } from 'pino';
import type { RequestContext } from '../http/context.js';
import { newIntentScope, runInIntentScope } from '../ledger/audit-intent.js';
import type { LedgerService } from '../ledger/ledger-service.js';

/** The `aroundMutation` hook of the App for `svc serve`. */
export function auditScopeAround(ledger: LedgerService, log: Logger): (ctx: RequestContext, handler: () => unknown) => unknown {
  return (ctx, handler) => {
    const p = ctx.principal;
    const scope = newIntentScope({
      requestId: ctx.requestId,
      route: `${ctx.method} ${ctx.route}`,
      actor: p?.actor ?? 'anonymous',
      actorKind: p?.actorKind ?? 'anonymous',
    });
    const settle = (): void => {
      if (scope.open === 0) return;
      ledger.recoverScope(scope).then(
        (n) => {
          if (n > 0)
            log.warn(
              { request_id: ctx.requestId, route: scope.route },
              'a committed change had no audit record: recorded as audit.recovered_after_failure',
            );
        },
        // The markers stay in the database; the periodic recovery records them later.
        (err: unknown) =>
          log.error(
            { err, request_id: ctx.requestId, route: scope.route },
            'recording a change without its audit record failed; it will be retried',
          ),
      );
    };
    let result: unknown;
    try {
      result = runInIntentScope(scope, handler);
    } catch (err) {
      settle();
      throw err;
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') (result as Promise<unknown>).then(settle, settle);
    else settle();
    // A change the store told of before it was on disk (SQLite group commit): no answer before it is.
    const synced = async (): Promise<void> => {
      if (scope.unsynced !== undefined) await scope.unsynced;
    };
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
      return (result as Promise<unknown>).then(
        async (v) => {
          await synced();
          return v;
        },
        async (err: unknown) => {
          await synced().catch(() => undefined);
          throw err;
        },
      );
    }
    if (scope.unsynced !== undefined) return synced().then(() => result);
    return result;
  };
}
