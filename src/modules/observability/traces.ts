/** `traces` and `traces/{id}`: what the trace-context-correlated ledger records say about a trace. */
import { errors } from '../../contract/errors.js';
import type { AuditRecord } from '../../ledger/record.js';
import type { Store } from '../../store/store.js';
import { traceIdOf, visitRecent, type Window } from './ledger-window.js';

export interface TraceSummary {
  trace_id: string;
  records: number;
  first_seen: string;
  last_seen: string;
  /** distinct actions, first ten in order of appearance */
  actions: string[];
}

/** Traces seen in the window, most recent first. */
export async function listTraces(
  store: Store,
  tenant: string,
  window: number,
  limit: number,
): Promise<{ ledger_window: Window; items: TraceSummary[]; has_more: boolean }> {
  const traces = new Map<string, TraceSummary>();
  const range = await visitRecent(store, tenant, window, (r) => {
    const id = traceIdOf(r);
    if (id === undefined) return;
    const t = traces.get(id) ?? { trace_id: id, records: 0, first_seen: r.occurred_at, last_seen: r.occurred_at, actions: [] };
    t.records++;
    t.last_seen = r.occurred_at;
    if (t.actions.length < 10 && !t.actions.includes(r.action)) t.actions.push(r.action);
    traces.set(id, t);
  });
  const all = [...traces.values()].sort((a, b) => (a.last_seen < b.last_seen ? 1 : a.last_seen > b.last_seen ? -1 : 0));
  return { ledger_window: range, items: all.slice(0, limit), has_more: all.length > limit };
}

/** A record as the trace answer shows it: what happened, and the integrity fields to re-verify it. */
function view(r: AuditRecord) {
  const meta = JSON.parse(r.meta ?? '{}') as { traceparent?: string };
  return {
    seq: r.seq,
    occurred_at: r.occurred_at,
    actor: r.actor,
    actor_kind: r.actor_kind,
    action: r.action,
    target_kind: r.target_kind,
    target_id: r.target_id,
    traceparent: meta.traceparent ?? '',
    prev_hash: r.prev_hash,
    hash: r.hash,
    sig: r.sig,
    key_id: r.key_id,
  };
}

/** Every record of one trace in the window, in seq order; 404 when there is none. */
export async function getTrace(store: Store, tenant: string, traceId: string, window: number) {
  const records: ReturnType<typeof view>[] = [];
  const range = await visitRecent(store, tenant, window, (r) => {
    if (traceIdOf(r) === traceId) records.push(view(r));
  });
  if (records.length === 0) throw errors.notFound('trace');
  return { trace_id: traceId, ledger_window: range, records };
}
