/** The one interface every output format implements (STYLE.md rule 9: one value per format). */
import type { AuditRecord } from '../ledger/record.js';

/** Product severity; `undetermined` is never invented into a number (spec: Severity mapping, rule 2). */
export type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical' | 'undetermined';

/** Build identity stamped on ledger lines (DECISIONS.md Encoders: vendor `svc`, product `control-plane`). */
export interface DeviceIdentity {
  vendor: string;
  product: string;
  version: string;
}

/**
 * A non-ledger egress event (notifications, findings, eventing envelopes).
 * Ledger records are encoded from `AuditRecord` directly so integrity fields ride verbatim.
 */
export interface EgressEvent {
  id: string;
  type: string;
  /** RFC 3339 UTC; absent when the event has no recorded time (never fabricated) */
  time?: string;
  severity: Severity;
  tenant?: string;
  title: string;
  /** flat displayable fields */
  fields: Record<string, string | number | boolean | null>;
  /** the raw captured envelope, posted verbatim by the eventing sink's `json` */
  raw?: unknown;
}

/** Options every encoder accepts. */
export interface EncodeOptions {
  device: DeviceIdentity;
}

/** A format: a token, a content type and pure record → line functions (no trailing newline). */
export interface Encoder {
  readonly token: string;
  readonly contentType: string;
  /** true for formats whose lines are JSON objects (terminator line is JSON, not `# …`) */
  readonly json: boolean;
  encodeRecord(record: AuditRecord, opts: EncodeOptions): string;
  /**
   * Optional fast path of the audit export: `encodeRecord` of a record read by the export reader,
   * with the row's stored text (export-source.ts `LedgerReader.each`; undefined when unknown).
   * Must return exactly what `encodeRecord` returns.
   */
  encodeStoredRecord?(record: AuditRecord, opts: EncodeOptions, text: string | undefined): string;
  encodeEvent?(event: EgressEvent, opts: EncodeOptions): string;
}
