/**
 * Collector findings: collectors push findings over gRPC into `ingest_items` (src/grpc/ingest-commit.ts);
 * this folds them into stored findings, deduplicated by natural key. A per-tenant mark names the
 * last item folded; it moves in the same transaction as the findings, and only from the value this
 * run read (compare-and-set), so two runs, in this process or on two replicas, never count an item
 * twice: the second one rolls back and the next run picks up from the new mark.
 *
 * Item ids are UUIDv7 minted at commit time; an ingest transaction that commits after a later-minted
 * one could slip under the mark. Runs only read items older than `SETTLE_MS`, which bounds that
 * window to ingest transactions longer than it.
 */
import { ApiError } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import type { Store } from '../../store/store.js';
import { upsertReportsInTx, type FindingsInTx } from './finding-store.js';
import { FINDING_SEVERITIES, type Finding, type FindingReport, type FindingSeverity } from './model.js';

/** Items per run; a backlog drains over several runs. */
const ROUND = 5_000;
/** Items younger than this wait for the next run (see the module comment). */
export const SETTLE_MS = 2_000;

export interface SyncOutcome {
  items: number;
  reported: Finding[];
  repeated: number;
}

interface ItemBody {
  rule?: unknown;
  severity?: unknown;
  subject?: unknown;
  message?: unknown;
  observed_at?: unknown;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A finding report from one stored item, or undefined for a body that is not one (never expected: ingest validated it). */
export function reportOfItem(
  body: string,
  batch: { collector: string; ledger_seq: number | null },
  tenant: string,
): FindingReport | undefined {
  let b: ItemBody;
  try {
    b = JSON.parse(body) as ItemBody;
  } catch {
    return undefined;
  }
  const rule = str(b.rule);
  const severity = str(b.severity);
  if (rule === '' || !(FINDING_SEVERITIES as readonly string[]).includes(severity)) return undefined;
  return {
    rule_id: rule,
    kind: 'collector',
    severity: severity as FindingSeverity,
    subject_kind: 'subject',
    subject_ref: str(b.subject),
    message: str(b.message),
    observed_at: str(b.observed_at) || nowTimestamp(),
    tags: batch.collector ? [`collector:${batch.collector}`] : [],
    ledger_refs: batch.ledger_seq !== null ? [{ tenant, seq: batch.ledger_seq, action: 'ingest.batch' }] : [],
  };
}

/** Folds the tenant's not-yet-read collector finding items into findings (one round of at most ROUND items). */
export async function syncCollectorFindings(
  store: Store,
  tenant: string,
  now = Date.now(),
  inTx?: FindingsInTx<SyncOutcome>,
): Promise<SyncOutcome> {
  const settled = new Date(now - SETTLE_MS).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
  return store.withTenant(tenant, async (tx) => {
    const mark = await tx.selectFrom('security_ingest_marks').select('last_item_id').where('tenant_id', '=', tenant).executeTakeFirst();
    let q = tx
      .selectFrom('ingest_items as i')
      .leftJoin('ingest_batches as b', (j) => j.onRef('b.tenant_id', '=', 'i.tenant_id').onRef('b.batch_id', '=', 'i.batch_id'))
      .select(['i.id', 'i.body', 'b.collector', 'b.ledger_seq'])
      .where('i.tenant_id', '=', tenant)
      .where('i.kind', '=', 'finding')
      .where('i.created_at', '<=', settled);
    if (mark) q = q.where('i.id', '>', mark.last_item_id);
    const items = await q.orderBy('i.id').limit(ROUND).execute();
    const lastItem = items[items.length - 1];
    if (!lastItem) return { items: 0, reported: [], repeated: 0 };
    const reports: FindingReport[] = [];
    for (const it of items) {
      const r = reportOfItem(
        it.body,
        { collector: it.collector ?? '', ledger_seq: it.ledger_seq === null || it.ledger_seq === undefined ? null : Number(it.ledger_seq) },
        tenant,
      );
      if (r) reports.push(r);
    }
    const out = await upsertReportsInTx(tx, tenant, 'collector', reports, 'system');
    const at = nowTimestamp();
    if (!mark) {
      await tx.insertInto('security_ingest_marks').values({ tenant_id: tenant, last_item_id: lastItem.id, updated_at: at }).execute();
    } else {
      const moved = await tx
        .updateTable('security_ingest_marks')
        .set({ last_item_id: lastItem.id, updated_at: at })
        .where('tenant_id', '=', tenant)
        .where('last_item_id', '=', mark.last_item_id)
        .executeTakeFirst();
      // Another run moved the mark first: roll this one back (its items were counted there).
      if (Number(moved.numUpdatedRows) !== 1) throw new ApiError('conflict', 'collector findings were folded concurrently; retry');
    }
    const synced = { items: items.length, reported: out.reported, repeated: out.repeated };
    await inTx?.(tx, synced);
    return synced;
  });
}
