/** The durable {@link AuditSink}: every append goes through the ledger pipeline and resolves once committed. */
import type { AuditSink } from './audit-sink.js';
import { currentIntentScope } from './audit-intent.js';
import type { LedgerPipeline } from './pipeline.js';
import type { BusEvent } from '../events/event-types.js';
import type { AuditDraft, AuditRecord } from './record.js';

/** `services.audit` in `svc serve`. */
export class LedgerAuditSink implements AuditSink {
  constructor(private readonly pipeline: LedgerPipeline) {}

  /**
   * Append to the tenant's chain (SYSTEM_TENANT for the system chain); resolves once durable. In a
   * mutating request, the record's commit also deletes the markers of the changes the request has
   * committed so far (audit-intent.ts): they now have their record.
   */
  async append(tenant: string, draft: AuditDraft, events?: BusEvent[]): Promise<AuditRecord> {
    const scope = currentIntentScope();
    if (scope === undefined || scope.open === 0) return this.pipeline.append(tenant, draft, undefined, events);
    const open = scope.open;
    scope.open = 0;
    try {
      return await this.pipeline.append(tenant, draft, scope.id, events);
    } catch (err) {
      // Not committed: the markers stay, and the end of the request records them.
      scope.open += open;
      throw err;
    }
  }
}
