/**
 * No committed change without its audit record, even across a crash.
 *
 * A mutating request appends its audit record after its change has committed (the record needs
 * the change's outcome, and its append waits for signing). A process that dies in between would
 * leave a change with no record. So every transaction a mutating request commits also writes a
 * marker row (`audit_intents`), in that same transaction, and the transaction that commits the
 * request's audit record deletes the request's markers (ledger/pipeline.ts). A marker therefore
 * outlives its request only when the change committed and its record did not: the handler failed
 * after committing, the ledger refused the append, or the process died. Such markers become an
 * `audit.recovered_after_failure` record (who, which route, which request, when the change
 * committed) on the affected chain: at the end of the request, and for markers left by a dead
 * process, by {@link recoverStaleIntents} at start and on the checkpoint interval.
 *
 * The scope of a request is an AsyncLocalStorage context; the stores call {@link markIntent}
 * inside every transaction member that succeeded while a scope is active and that changed rows
 * (issue 30 item 4): a refused request whose transactions only read (a role lookup, a search
 * for an id that does not exist) committed no change, so it leaves no marker and can never be
 * recorded as a recovered change. The database itself says whether the body wrote
 * ({@link ChangeProbe}), so no route has to declare it. The ledger's own transactions run outside
 * any scope.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { SqliteHandle, Store } from '../store/store-types.js';
import { SYSTEM_TENANT, type AuditDraft, type AuditRecord } from './record.js';
import { assertChainAppendable } from './chain-head.js';
import { nowTimestamp } from './time.js';
import { uuid7 } from './uuid7.js';

/** The action of a record written for a change whose own record was lost. */
export const RECOVERED_ACTION = 'audit.recovered_after_failure';

/** One mutating request's scope. */
export interface IntentScope {
  /** UUIDv7, the markers' `scope` */
  readonly id: string;
  readonly requestId: string;
  /** `METHOD /route/template` */
  readonly route: string;
  readonly actor: string;
  readonly actorKind: string;
  /** markers written since the last append of this request consumed them */
  open: number;
  /**
   * Set by a store that told this request of a committed change before the change was on disk
   * (SQLite, store/sqlite/sqlite-store.ts): resolves once it is. The request's answer waits for it
   * (serve/audit-scope.ts); its audit record's own durable commit comes later and covers it anyway.
   */
  unsynced?: Promise<void>;
}

const scopes = new AsyncLocalStorage<IntentScope>();

/** A fresh scope for one request. */
export function newIntentScope(request: { requestId: string; route: string; actor: string; actorKind: string }): IntentScope {
  return { id: uuid7(), requestId: request.requestId, route: request.route, actor: request.actor, actorKind: request.actorKind, open: 0 };
}

/** Runs `fn` (a request handler) in `scope`. */
export function runInIntentScope<T>(scope: IntentScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** Runs `fn` outside any request scope (the ledger's own transactions, background work). */
export function outsideIntentScope<T>(fn: () => T): T {
  return scopes.exit(fn);
}

/** The scope of the running request, if it mutates. */
export function currentIntentScope(): IntentScope | undefined {
  return scopes.getStore();
}

/**
 * How a store tells whether a transaction body changed rows.
 * - `counter`: SQLite's `total_changes()` of the connection (inserts, updates and deletes,
 *   triggers' included), read before and after the body; the bodies of a group run one after
 *   another on that one connection, so the difference is this body's.
 * - `xid`: Postgres assigns a transaction id at the first row a transaction writes (or locks:
 *   `SELECT … FOR UPDATE`), and `txid_current_if_assigned()` is null until then; the marker's
 *   insert carries that test, so it costs no extra round trip. Each store transaction is its own
 *   Postgres transaction, so the test sees this body alone.
 */
export type ChangeProbe = { kind: 'counter'; read: () => number } | { kind: 'xid' };

/**
 * Wraps a transaction body for the stores: when the caller runs in a request scope and the body
 * changed rows, its success also writes that request's marker, in the same transaction. The scope
 * is taken when the transaction is asked for, not when the body runs (a grouped SQLite body runs in
 * another request's async context).
 */
export function withIntentMarker<T>(
  tenant: string | null,
  fn: (tx: Transaction<Database>) => Promise<T>,
  probe: ChangeProbe,
): (tx: Transaction<Database>) => Promise<T> {
  const s = scopes.getStore();
  if (s === undefined) return fn;
  if (probe.kind === 'counter') {
    return async (tx) => {
      const before = probe.read();
      const out = await fn(tx);
      if (probe.read() !== before) {
        // A change whose record cannot be appended must not commit (issue 30 item 8): when the
        // chain's head does not name its last record, this throws and the whole transaction rolls
        // back, so the request fails with nothing changed instead of a committed change behind a 500.
        await assertChainAppendable(tx, tenant ?? SYSTEM_TENANT);
        await markIntent(tx, tenant, s);
      }
      return out;
    };
  }
  return async (tx) => {
    const out = await fn(tx);
    const opened = s.open;
    await markIntentIfWritten(tx, tenant, s);
    // The same check (see above) when the body wrote; a throw here rolls the marker back with the change.
    if (s.open !== opened) await assertChainAppendable(tx, tenant ?? SYSTEM_TENANT);
    return out;
  };
}

function markerRow(tenant: string | null, s: IntentScope) {
  return {
    id: uuid7(),
    scope: s.id,
    chain: tenant ?? SYSTEM_TENANT,
    actor: s.actor,
    actor_kind: s.actorKind,
    route: s.route,
    request_id: s.requestId,
    created_at: nowTimestamp(),
  };
}

async function markIntent(tx: Transaction<Database>, tenant: string | null, s: IntentScope): Promise<void> {
  await tx.insertInto('audit_intents').values(markerRow(tenant, s)).execute();
  s.open++;
}

/** Postgres: the marker only when the transaction has written (it has a transaction id by then). */
async function markIntentIfWritten(tx: Transaction<Database>, tenant: string | null, s: IntentScope): Promise<void> {
  const m = markerRow(tenant, s);
  // The one-time filter runs before the insert itself assigns an id.
  const res = await sql`insert into audit_intents (id, scope, chain, actor, actor_kind, route, request_id, created_at)
    select ${m.id}::uuid, ${m.scope}::uuid, ${m.chain}::uuid, ${m.actor}::text, ${m.actor_kind}::text, ${m.route}::text,
      ${m.request_id}::text, ${m.created_at}::text
    where txid_current_if_assigned() is not null`.execute(tx);
  if (Number(res.numAffectedRows ?? 0n) > 0) s.open++;
}

/** Deletes the markers of `scopes` inside the transaction that commits their records (Kysely, any backend). */
export async function consumeIntents(tx: Kysely<Database>, scopeIds: readonly string[]): Promise<void> {
  if (scopeIds.length > 0) await tx.deleteFrom('audit_intents').where('scope', 'in', [...scopeIds]).execute();
}

const deleteStatements = new WeakMap<SqliteHandle, ReturnType<SqliteHandle['prepare']>>();

/** {@link consumeIntents} on the raw SQLite connection of the ledger's batch commit. */
export function sqliteConsumeIntents(db: SqliteHandle, scopeIds: readonly string[]): void {
  if (scopeIds.length === 0) return;
  let stmt = deleteStatements.get(db);
  if (stmt === undefined) {
    stmt = db.prepare('delete from audit_intents where scope = ?');
    deleteStatements.set(db, stmt);
  }
  for (const id of scopeIds) stmt.run(id);
}

/** Appends to a chain, deleting the markers of `consumes` in the commit of the record. */
export type IntentAppend = (tenant: string, draft: AuditDraft, consumes: string) => Promise<AuditRecord>;

interface Marker {
  scope: string;
  chain: string;
  actor: string;
  actor_kind: string;
  route: string;
  request_id: string;
  created_at: string;
}

/** One recovery record per request scope among `markers`; returns how many were written. */
async function recover(append: IntentAppend, markers: Marker[], cause: string): Promise<number> {
  const byScope = new Map<string, Marker[]>();
  for (const m of markers) byScope.set(m.scope, [...(byScope.get(m.scope) ?? []), m]);
  let n = 0;
  for (const [scope, ms] of byScope) {
    ms.sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
    const first = ms[0] as Marker;
    const tenants = [...new Set(ms.map((m) => m.chain))];
    // One record per request, on the first changed chain (the system chain for unbound changes);
    // it names every chain the request changed.
    await append(
      first.chain,
      {
        actor: first.actor,
        actor_kind: first.actor_kind,
        action: RECOVERED_ACTION,
        target_kind: 'request',
        target_id: first.request_id,
        meta: { route: first.route, request_id: first.request_id, committed_at: first.created_at, changes: ms.length, tenants, cause },
      },
      scope,
    );
    n++;
  }
  return n;
}

/** At the end of a request: its markers still present become a recovery record. */
export async function recoverScope(store: Store, append: IntentAppend, scope: IntentScope): Promise<number> {
  if (scope.open === 0) return 0;
  scope.open = 0;
  const markers = await outsideIntentScope(() =>
    store.transaction((tx) => tx.selectFrom('audit_intents').selectAll().where('scope', '=', scope.id).execute()),
  );
  return recover(append, markers, 'the request ended before its audit record was committed');
}

/** Markers older than `olderThanMs` (their process died, or could not write the record): recovery records. */
export async function recoverStaleIntents(
  store: Store,
  append: IntentAppend,
  olderThanMs: number,
  now: () => number = Date.now,
): Promise<number> {
  const cutoff = new Date(now() - olderThanMs).toISOString().replace('Z', '000000Z');
  const markers = await outsideIntentScope(() =>
    store.transaction((tx) =>
      tx.selectFrom('audit_intents').selectAll().where('created_at', '<', cutoff).orderBy('created_at').limit(10_000).execute(),
    ),
  );
  return recover(append, markers, 'the change committed but its audit record was not (for example the process stopped in between)');
}
