/**
 * What executing an erasure does (docs/compliance.md "What is and is not erased"), once the hold
 * check and the approval have passed:
 *  1. in one transaction: the `erase` record hooks of the subject and each alias (guards first: a
 *     hold placed meanwhile still wins), and the personal fields of a `user` subject tombstoned
 *     (data class `identity`);
 *  2. the meta of the subject's ledger records erased, blind destroyed, commitment kept (data class
 *     `audit`; src/ledger/erasure.ts), on the tenant's chain and, for a user erased in step 1, on the
 *     system chain (its `user.create` and token records);
 *  3. (the caller, once its own last write is done: {@link reclaimAfterErasure}) on SQLite, svc.db
 *     vacuumed (fragments of rewritten rows leave the pages), then the WAL checkpointed and
 *     truncated so the old page images leave the files.
 * On a server with export threads (SQLite), the ledger scan of step 2 and the checkpoint of step 3
 * run on them ({@link erasureOffload}, src/ledger/erasure-scan.ts): the main thread keeps only the
 * short UPDATEs on the writer, so `/healthz` and every other request are answered meanwhile; the
 * VACUUM runs on the main thread (it rewrites the whole file and holds the writer while it runs).
 * An erasure without data classes covers every class.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tombstoneUser } from '../../core/users/user-service.js';
import { eraseLedgerMeta, MIN_NEEDLE, reclaimSqlite, type ErasureOffload, type SubjectMatch } from '../../ledger/erasure.js';
import type { CheckpointResult, ErasureTask, ScanResult } from '../../ledger/erasure-scan.js';
import { SYSTEM_TENANT } from '../../ledger/record.js';
import { nowTimestamp } from '../../ledger/time.js';
import { PERSONAL_TEXT, type PersonalText } from '../../contract/erase-text.js';
import { sql, type Transaction } from 'kysely';
import type { RequestContext } from '../../http/context.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store-types.js';

type Ctx = Pick<RequestContext, 'services'>;

// The compiled worker module sits in dist/src/ledger/.
const ERASURE_WORKER = fileURLToPath(new URL('../../ledger/erasure-worker.js', import.meta.url));

/** The export threads as the erasure's offload, when the server has them and runs on SQLite. */
export function erasureOffload(services: Ctx['services']): ErasureOffload | undefined {
  const exporter = services.auditExport;
  const source = exporter?.source;
  if (exporter === undefined || source?.kind !== 'sqlite') return undefined;
  return { file: source.file, run: (task) => exporter.runTask<ErasureTask, ScanResult | CheckpointResult>(ERASURE_WORKER, task) };
}
/** The fields of an erasure request that execution reads. */
interface Erasure { id: string; subject_kind: string; subject_ref: string; aliases: string[]; data_classes: string[] }

export type Erased = { where: string; count: number };

/** The data classes an erasure covers: `identity` (domain records' personal fields), `audit` (ledger meta). */
export const ERASURE_CLASSES = ['identity', 'audit'] as const;

function covers(e: Erasure, cls: (typeof ERASURE_CLASSES)[number]): boolean {
  return e.data_classes.length === 0 || e.data_classes.includes(cls);
}

/** `sha256:<hex>` of an alias: what the request keeps once executed (the alias itself is personal data). */
export function aliasDigest(alias: string): string {
  return alias.startsWith('sha256:') ? alias : `sha256:${createHash('sha256').update(alias, 'utf8').digest('hex')}`;
}

export interface ErasureOutcome {
  erased: Erased[];
  not_erased: string[];
}

/**
 * Steps 1–3 for request `e`. `inTx` runs inside step 1's transaction (the caller's own checks and
 * status change). Throws before anything is erased when a guard refuses.
 */
export async function runErasure(
  ctx: Ctx,
  tenant: string,
  e: Erasure,
  inTx: (tx: Transaction<Database>) => Promise<void>,
): Promise<ErasureOutcome> {
  const store = ctx.services.store;
  const hooks = ctx.services.hooks;
  const refs = [e.subject_ref, ...e.aliases];
  const erased: Erased[] = [];
  const notErased: string[] = [];
  const strings = new Set(refs);
  let userErased = false;
  await store.withTenant(tenant, async (tx) => {
    // SQLite zeroes the freed cell content of every row this transaction rewrites (the old text
    // would otherwise stay in the page until reused); per connection, left on like the ledger step.
    if (store.sqlite !== undefined) await sql`pragma secure_delete = on`.execute(tx);
    await inTx(tx);
    for (const ref of refs) {
      await hooks.run('erase', {
        store,
        tx,
        tenant,
        kind: e.subject_kind,
        id: ref,
        record: { subject_kind: e.subject_kind, subject_ref: ref, data_classes: e.data_classes, erasure_id: e.id },
      });
    }
    if (covers(e, 'audit')) {
      for (const ref of refs)
        await hooks.run('erase', {
          store,
          tx,
          tenant,
          kind: 'audit_meta',
          id: ref,
          record: { subject_kind: e.subject_kind, subject_ref: ref, data_classes: e.data_classes, erasure_id: e.id },
        });
    }
    if (e.subject_kind === 'user' && covers(e, 'identity')) {
      const t = await tombstoneUser(tx, tenant, e.subject_ref);
      if (t.erased) {
        userErased = true;
        strings.add(t.email);
        erased.push({ where: 'users: e-mail tombstoned, password hash destroyed, sessions and API keys revoked', count: 1 });
      } else notErased.push(`users: ${t.reason}`);
    }
    if (covers(e, 'identity')) await redactPersonalText(ctx, tx, tenant, e, userErased ? e.subject_ref : null, strings, erased, notErased);
  });
  if (covers(e, 'audit')) {
    const match: SubjectMatch = {
      actors: refs.map((r) => `${e.subject_kind}:${r}`),
      targets: refs,
      strings: [...strings].filter((s) => s.length >= MIN_NEEDLE),
    };
    for (const s of strings)
      if (s.length < MIN_NEEDLE)
        notErased.push(`audit ledger: meta containing ${JSON.stringify(s)} is not searched (shorter than ${MIN_NEEDLE} characters)`);
    const offload = erasureOffload(ctx.services);
    const own = await eraseLedgerMeta(store, tenant, match, undefined, offload);
    erased.push({
      where: "audit ledger (tenant chain): meta of the subject's records (blind destroyed, commitment kept)",
      count: own.erased,
    });
    if (userErased) {
      const sys = await eraseLedgerMeta(store, SYSTEM_TENANT, match, undefined, offload);
      erased.push({
        where: "audit ledger (system chain): meta of the user's records (blind destroyed, commitment kept)",
        count: sys.erased,
      });
    }
  } else notErased.push('audit ledger: data class `audit` not requested');
  return { erased, not_erased: notErased };
}

/**
 * The `erase` cascades on `personal_text` (src/contract/erase-text.ts): every area that keeps free
 * text redacts the subject's identifiers from it: the aliases and, for a user, the e-mail the user
 * had. A user's id is not among them (ids are not personal text, and other rows name the user by
 * it); another kind's ref is (it may be an e-mail or a name).
 */
async function redactPersonalText(
  ctx: Ctx,
  tx: Transaction<Database>,
  tenant: string,
  e: Erasure,
  userId: string | null,
  found: ReadonlySet<string>,
  erased: Erased[],
  notErased: string[],
): Promise<void> {
  const all = [...found].filter((s) => e.subject_kind !== 'user' || s !== e.subject_ref);
  const strings = all.filter((s) => s.length >= MIN_NEEDLE);
  for (const s of all)
    if (s.length < MIN_NEEDLE) notErased.push(`free text: ${JSON.stringify(s)} is not searched (shorter than ${MIN_NEEDLE} characters)`);
  if (strings.length === 0) return;
  const record: PersonalText = { strings, user_id: userId, now: nowTimestamp(), report: [] };
  // The cascades append to `record.report` (one entry per table they looked at).
  const hook = {
    store: ctx.services.store,
    tx,
    tenant,
    kind: PERSONAL_TEXT,
    id: e.subject_ref,
    record: record as unknown as Record<string, unknown>,
  };
  await ctx.services.hooks.run('erase', hook);
  erased.push(...record.report);
}

/**
 * `wal_checkpoint(TRUNCATE)` on a connection of its own, without waiting on the main thread: a
 * busy answer (a read or write transaction in flight, possibly on this very thread) is retried
 * after a pause, at most 40 times.
 */
export async function checkpointWal(dbFile: string): Promise<{ busy: boolean }> {
  for (let i = 0; i < 40; i++) {
    try {
      const r = reclaimSqlite(dbFile, { busyTimeoutMs: 0 });
      if (!r.busy && r.wal_frames === 0) return { busy: false };
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    }
    await sleep(50);
  }
  return { busy: true };
}

/**
 * `VACUUM` of svc.db on a connection of its own, on this thread: SQLite's `secure_delete` zeroes
 * freed cells, but a page rebuilt by a b-tree balance keeps old cell bytes in its unallocated gap
 * (sqlite3.c rebuildPage), so only rebuilding the file removes every fragment of rewritten text.
 * Without a busy wait: a transaction in flight on the writer (awaiting on this very thread) makes
 * it answer busy, and it is retried after a pause, at most 40 times. True when it ran.
 */
export async function vacuumSqlite(dbFile: string): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    try {
      reclaimSqlite(dbFile, { vacuum: true, busyTimeoutMs: 0 });
      return true;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' && (err as { code?: string }).code !== 'SQLITE_LOCKED') throw err;
    }
    await sleep(50);
  }
  return false;
}

/**
 * Step 3: on SQLite, the WAL checkpointed and truncated (on an export thread with `offload`: PASSIVE
 * until backfilled, then TRUNCATE; erasure-scan.ts); what could not be done goes to `not_erased`.
 */
export async function reclaimAfterErasure(
  store: Store,
  notErased: string[],
  offload?: ErasureOffload,
  opts: { vacuum?: boolean } = {},
): Promise<void> {
  const dbFile = store.sqlite?.files.dbFile;
  if (dbFile !== undefined && opts.vacuum === true && !(await vacuumSqlite(dbFile)))
    notErased.push(
      'sqlite: VACUUM was kept busy by transactions in flight; fragments of rewritten rows may stay in svc.db until `sqlite3 svc.db ' +
        'vacuum` (docs/compliance.md "The bytes are gone")',
    );
  if (dbFile === undefined) {
    notErased.push(
      'postgres: the old row versions stay in the table files until `VACUUM (FULL)` of the affected tables (docs/compliance.md "The ' +
        'bytes are gone")',
    );
    return;
  }
  const r = offload !== undefined ? await offload.run({ kind: 'erasure-checkpoint', file: dbFile }) : await checkpointWal(dbFile);
  if (!('busy' in r) || r.busy)
    notErased.push(
      'sqlite WAL: the checkpoint was kept busy by a reader; old page images stay in svc.db-wal until the next checkpoint ' +
        '(docs/compliance.md)',
    );
}
