/**
 * The durable event log (migration 23). Every event of a tenant gets the next per-tenant sequence
 * and is written in the transaction of the change it announces, so an acknowledged change always
 * has its event and a rolled-back one never does. On Postgres the `event_seqs` row stays locked
 * until that transaction commits: sequences become visible in commit order, never with a gap that
 * fills in later, so a reader may move a cursor past everything it saw. Retention deletes events
 * older than `SERVICE_EVENTS_RETENTION_HOURS` (default 168 = 7 days).
 */
import { PostgresAdapter, sql, type Transaction } from 'kysely';
import { formatTimestamp, nowTimestamp } from '../ledger/time.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store.js';
import type { SqliteHandle } from '../store/store-types.js';
import type { BusEvent } from './event-types.js';
import { ApiError } from '../contract/errors.js';
import type { RecordHooks } from '../contract/record-hooks.js';

type Tx = Transaction<Database>;

function groupByTenant(events: readonly BusEvent[]): Map<string, BusEvent[]> {
  const byTenant = new Map<string, BusEvent[]>();
  for (const e of events) {
    const list = byTenant.get(e.tenant);
    if (list) list.push(e);
    else byTenant.set(e.tenant, [e]);
  }
  return byTenant;
}

/**
 * On Postgres, a transaction of no tenant (a change to a global record: a user, an API key) writes
 * its events into the tenants they concern: the tenant binding is set for those rows and put back
 * to none after them, so row-level security still checks every row. A transaction bound to one
 * tenant is left alone: an event for another tenant is refused there as before.
 */
async function inTenant<T>(tx: Tx, tenant: string, fn: () => Promise<T>): Promise<T> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return fn();
  const bound = (await sql<{ t: string | null }>`select current_setting('app.tenant_id', true) as t`.execute(tx)).rows[0]?.t ?? '';
  if (bound !== '') return fn();
  await sql`select set_config('app.tenant_id', ${tenant}, true)`.execute(tx);
  const out = await fn();
  await sql`select set_config('app.tenant_id', '', true)`.execute(tx);
  return out;
}

/** Appends events (already stamped with id, source, time) of one or more tenants; returns them with their sequence. */
export async function appendEvents(tx: Tx, events: readonly BusEvent[]): Promise<BusEvent[]> {
  const byTenant = groupByTenant(events);
  const out: BusEvent[] = [];
  for (const [tenant, list] of byTenant) out.push(...(await inTenant(tx, tenant, () => appendTenantEvents(tx, tenant, list))));
  return out;
}

async function appendTenantEvents(tx: Tx, tenant: string, list: readonly BusEvent[]): Promise<BusEvent[]> {
  const out: BusEvent[] = [];
  const now = nowTimestamp();
  {
    const n = list.length;
    const row = await tx
      .insertInto('event_seqs')
      .values({ tenant_id: tenant, last_seq: n })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ last_seq: sql<number>`event_seqs.last_seq + ${n}` }))
      .returning('last_seq')
      .executeTakeFirstOrThrow();
    let seq = Number(row.last_seq) - n;
    const rows = list.map((e) => {
      seq++;
      out.push({ ...e, sequence: seq });
      return {
        tenant_id: tenant,
        seq,
        id: e.id,
        type: e.type,
        source: e.source,
        subject: e.subject,
        time: e.time,
        data: JSON.stringify(e.data),
        traceparent: e.traceparent ?? null,
        created_at: now,
      };
    });
    for (let i = 0; i < rows.length; i += 200) await tx.insertInto('events').values(rows.slice(i, i + 200)).execute();
  }
  return out;
}

const SQLITE_MULTI = 32;
const EVENT_ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
type Prepared = ReturnType<SqliteHandle['prepare']>;
type SqliteEventStatements = { seq: Prepared; one: Prepared; many: Prepared };
const sqliteStatements = new WeakMap<SqliteHandle, SqliteEventStatements>();

function sqlitePrepared(db: SqliteHandle): SqliteEventStatements {
  let s = sqliteStatements.get(db);
  if (s === undefined) {
    const insert = 'insert into events (tenant_id, seq, id, type, source, subject, time, data, traceparent, created_at) values ';
    s = {
      seq: db.prepare(
        'insert into event_seqs (tenant_id, last_seq) values (?, ?) ' +
          'on conflict (tenant_id) do update set last_seq = event_seqs.last_seq + excluded.last_seq returning last_seq',
      ),
      one: db.prepare(insert + EVENT_ROW),
      many: db.prepare(insert + Array.from({ length: SQLITE_MULTI }, () => EVENT_ROW).join(', ')),
    };
    sqliteStatements.set(db, s);
  }
  return s;
}

/**
 * {@link appendEvents} on a SQLite connection inside its write transaction (prepared statements; the
 * ledger's commit, which is not a Kysely transaction). Sets each event's `sequence`.
 */
// raw: bench ledger-append (the ledger's commit runs on the raw connection); appendEvents is the Kysely form.
export function sqliteAppendEvents(db: SqliteHandle, events: readonly BusEvent[]): void {
  if (events.length === 0) return;
  const s = sqlitePrepared(db);
  const now = nowTimestamp();
  for (const [tenant, list] of groupByTenant(events)) {
    const row = s.seq.get(tenant, list.length) as { last_seq: number | bigint };
    let seq = Number(row.last_seq) - list.length;
    const params: unknown[] = [];
    for (const e of list) {
      e.sequence = ++seq;
      params.push(tenant, seq, e.id, e.type, e.source, e.subject, e.time, JSON.stringify(e.data), e.traceparent ?? null, now);
    }
    // Whole statements of SQLITE_MULTI rows, then one row at a time: fewer statement runs per batch.
    const width = 10;
    let off = 0;
    for (; off + SQLITE_MULTI <= list.length; off += SQLITE_MULTI) s.many.run(...params.slice(off * width, (off + SQLITE_MULTI) * width));
    for (; off < list.length; off++) s.one.run(...params.slice(off * width, (off + 1) * width));
  }
}

type EventRow = Database['events'] extends infer T ? { [K in keyof T]: unknown } : never;

/** A stored row back to the event. */
export function eventFromRow(
  r: Pick<EventRow, 'tenant_id' | 'seq' | 'id' | 'type' | 'source' | 'subject' | 'time' | 'data' | 'traceparent'>,
): BusEvent {
  const e: BusEvent = {
    tenant: String(r.tenant_id),
    sequence: Number(r.seq),
    id: String(r.id),
    type: String(r.type),
    source: String(r.source),
    subject: String(r.subject),
    time: String(r.time),
    data: JSON.parse(String(r.data)) as Record<string, unknown>,
  };
  if (r.traceparent) e.traceparent = String(r.traceparent);
  return e;
}

export const EVENT_COLUMNS = ['tenant_id', 'seq', 'id', 'type', 'source', 'subject', 'time', 'data', 'traceparent'] as const;

/** Events of a tenant after `afterSeq` in sequence order, optionally of some types. */
export async function readEvents(
  tx: Tx,
  tenant: string,
  afterSeq: number,
  limit: number,
  types?: readonly string[],
  uptoSeq?: number,
): Promise<BusEvent[]> {
  let q = tx.selectFrom('events').select(EVENT_COLUMNS).where('tenant_id', '=', tenant).where('seq', '>', afterSeq);
  if (uptoSeq !== undefined) q = q.where('seq', '<=', uptoSeq);
  if (types) {
    if (types.length === 0) return [];
    q = q.where('type', 'in', [...types]);
  }
  const rows = await q.orderBy('seq').limit(limit).execute();
  return rows.map(eventFromRow);
}

/** The highest sequence a tenant has handed out (0 for none). */
export async function lastSeq(tx: Tx, tenant: string): Promise<number> {
  const r = await tx.selectFrom('event_seqs').select('last_seq').where('tenant_id', '=', tenant).executeTakeFirst();
  return r ? Number(r.last_seq) : 0;
}

/** The retention window in ms (`SERVICE_EVENTS_RETENTION_HOURS`, default 168, 1–87600). */
export function retentionMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SERVICE_EVENTS_RETENTION_HOURS'];
  const hours = raw === undefined || raw === '' ? 168 : Number(raw);
  if (!Number.isInteger(hours) || hours < 1 || hours > 87_600)
    throw new Error(`SERVICE_EVENTS_RETENTION_HOURS must be a whole number of hours from 1 to 87600, got ${JSON.stringify(raw)}`);
  return hours * 3_600_000;
}

/**
 * The subjects of a tenant's expired events whose delete a guard refuses (a legal hold: 409
 * `legal_hold`, src/modules/compliance/hooks.ts); their events stay past retention.
 */
async function heldSubjects(store: Store, tx: Tx, hooks: RecordHooks, tenant: string, cutoff: string): Promise<string[]> {
  const rows = await tx
    .selectFrom('events')
    .select('subject')
    .distinct()
    .where('tenant_id', '=', tenant)
    .where('created_at', '<', cutoff)
    .execute();
  const keep: string[] = [];
  for (const { subject } of rows) {
    try {
      await hooks.run('delete', { store, tx, tenant, kind: 'event', id: subject, record: { subject } });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'legal_hold') keep.push(subject);
      else throw err;
    }
  }
  return keep;
}

/**
 * Deletes every tenant's events (and finished deliveries) older than the retention window; returns
 * how many events went. With `hooks`, each expired subject's delete guards run first: the events of
 * a subject under a legal hold (or of a tenant under a tenant hold) are kept.
 */
export async function purgeExpired(store: Store, retention: number, now = Date.now(), hooks?: RecordHooks): Promise<number> {
  const cutoff = formatTimestamp(BigInt(now - retention) * 1_000_000n);
  const tenants = await store.transaction((tx) => tx.selectFrom('tenants').select('id').execute());
  let n = 0;
  for (const { id } of tenants) {
    n += await store.withTenant(id, async (tx) => {
      const keep = hooks === undefined ? [] : await heldSubjects(store, tx, hooks, id, cutoff);
      let del = tx.deleteFrom('events').where('tenant_id', '=', id).where('created_at', '<', cutoff);
      if (keep.length > 0) del = del.where('subject', 'not in', keep);
      const res = await del.executeTakeFirst();
      await tx
        .deleteFrom('event_deliveries')
        .where('tenant_id', '=', id)
        .where('status', 'in', ['delivered', 'failed', 'dead'])
        .where('updated_at', '<', cutoff)
        .execute();
      return Number(res.numDeletedRows);
    });
  }
  return n;
}

/** The CloudEvents 1.0 JSON envelope (DECISIONS.md "Event envelope"); what the `json` sink posts. */
export function cloudEvent(e: BusEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {
    specversion: '1.0',
    id: e.id,
    source: e.source,
    type: e.type,
    subject: e.subject,
    time: e.time,
    datacontenttype: 'application/json',
    data: e.data,
    tenantid: e.tenant,
  };
  if (e.sequence !== undefined) out['sequence'] = String(e.sequence);
  if (e.traceparent) out['traceparent'] = e.traceparent;
  return out;
}
