/** The durable {@link AuditSink}: every append goes through the ledger pipeline and resolves once committed. */
import type { AuditSink } from './audit-sink.js';
import type { LedgerPipeline } from './pipeline.js';
import type { AuditDraft, AuditRecord } from './record.js';

/** `services.audit` in `svc serve`. */
export class LedgerAuditSink implements AuditSink {
  constructor(private readonly pipeline: LedgerPipeline) {}

  /** Append to the tenant's chain (SYSTEM_TENANT for the system chain); resolves once durable. */
  append(tenant: string, draft: AuditDraft): Promise<AuditRecord> {
    return this.pipeline.append(tenant, draft);
  }
}
