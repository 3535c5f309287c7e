/**
 * The seam every state change and privileged read goes through (DECISIONS.md: every mutating
 * core route and every privileged read appends a ledger record). Routes depend on this
 * interface only; `svc serve` plugs in the durable ledger pipeline.
 */
import type { BusEvent } from '../events/event-types.js';
import type { AuditDraft, AuditRecord } from './record.js';

export interface AuditSink {
  /**
   * Append to the tenant's chain (SYSTEM_TENANT for the system chain); resolves once durable.
   * `events` (stamped by the bus) are written to the event log in the record's own commit.
   */
  append(tenant: string, draft: AuditDraft, events?: BusEvent[]): Promise<AuditRecord>;
}

/** An in-memory recorder for tests of routes that must audit; it seals nothing. */
export class RecordingAuditSink implements AuditSink {
  readonly appended: Array<{ tenant: string; draft: AuditDraft; events?: BusEvent[] }> = [];

  async append(tenant: string, draft: AuditDraft, events?: BusEvent[]): Promise<AuditRecord> {
    this.appended.push({ tenant, draft, ...(events ? { events } : {}) });
    const seq = this.appended.filter((a) => a.tenant === tenant).length;
    return {
      id: `rec-${this.appended.length}`,
      tenant,
      seq,
      occurred_at: draft.occurred_at ?? new Date().toISOString().replace('Z', '000000Z'),
      actor: draft.actor,
      actor_kind: draft.actor_kind,
      action: draft.action,
      target_kind: draft.target_kind,
      target_id: draft.target_id,
      meta: draft.meta ? JSON.stringify(draft.meta) : '{}',
      meta_blind: null,
      meta_commitment: '',
      payload_hash: draft.payload_hash ?? null,
      prev_hash: '',
      hash: '',
      sig: '',
      key_id: '',
    };
  }
}
