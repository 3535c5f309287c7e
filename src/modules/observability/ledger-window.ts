/**
 * Reading the recent end of a tenant's ledger through the ledger's own read functions: records that
 * carry a W3C `traceparent` in their meta (written by `ctx.audit`), and the export records.
 * Reads are bounded to the last `window` records, so a route answers in bounded time on any chain;
 * the answer says which seq range it looked at.
 */
import { readHead, readRange, readRecords } from '../../ledger/ledger-store.js';
import type { AuditRecord } from '../../ledger/record.js';
import type { Store } from '../../store/store.js';

/** Records examined per read by default. */
export const DEFAULT_WINDOW = 10_000;
const PAGE = 1_000;

export interface Window {
  from_seq: number;
  to_seq: number;
}

/** The trace id of a record's meta `traceparent`, if any. */
export function traceIdOf(r: AuditRecord): string | undefined {
  if (r.meta === null || !r.meta.includes('"traceparent"')) return undefined;
  try {
    const tp = (JSON.parse(r.meta) as { traceparent?: unknown }).traceparent;
    return typeof tp === 'string' ? tp.split('-')[1] : undefined;
  } catch {
    return undefined;
  }
}

/** Visits the last `window` records of the tenant's chain in seq order; returns the range looked at. */
export async function visitRecent(store: Store, tenant: string, window: number, visit: (r: AuditRecord) => void): Promise<Window> {
  return store.withTenant(tenant, async (tx) => {
    const head = (await readHead(tx, tenant))?.seq ?? 0;
    const from = Math.max(1, head - window + 1);
    for (let at = from; at <= head; at += PAGE) {
      for (const r of await readRange(tx, tenant, at, Math.min(head, at + PAGE - 1))) visit(r);
    }
    return { from_seq: head === 0 ? 0 : from, to_seq: head };
  });
}

/** Export records (`audit.export`, `security.findings.export`) in the window, by format: count and last time. */
export async function exportsByFormat(
  store: Store,
  tenant: string,
  window: number,
): Promise<{ range: Window; formats: Map<string, { count: number; last_seen: string }> }> {
  return store.withTenant(tenant, async (tx) => {
    const head = (await readHead(tx, tenant))?.seq ?? 0;
    const from = Math.max(1, head - window + 1);
    const formats = new Map<string, { count: number; last_seen: string }>();
    for (const action of ['audit.export', 'security.findings.export']) {
      let at = from;
      for (;;) {
        const rows = await readRecords(tx, tenant, at, PAGE, { action, toSeq: head });
        for (const r of rows) {
          if (r.action !== action) continue;
          let format = 'unknown';
          try {
            const f = (JSON.parse(r.meta ?? '{}') as { format?: unknown }).format;
            if (typeof f === 'string') format = f;
          } catch {
            // erased or unreadable meta: counted as unknown
          }
          const cur = formats.get(format);
          formats.set(format, { count: (cur?.count ?? 0) + 1, last_seen: r.occurred_at });
        }
        const last = rows[rows.length - 1];
        if (rows.length < PAGE || !last) break;
        at = last.seq + 1;
      }
    }
    return { range: { from_seq: head === 0 ? 0 : from, to_seq: head }, formats };
  });
}
