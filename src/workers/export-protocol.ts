/**
 * The typed boundary between the audit export (main thread) and the export worker: one request and
 * one result type. The worker reads its own seq range on its own read-only connection and hands
 * back encoded bytes as a transferred `ArrayBuffer`, so rows are never structured-cloned.
 */
import type { DeviceIdentity } from '../encoders/encoder.js';

/**
 * Where a worker reads the ledger from. Plain data (structured-clone-safe); the worker opens and
 * caches one connection per distinct source.
 */
export type ExportSource =
  /** `<dataDir>/svc.db`, opened read-only (WAL lets readers run beside the writer) */
  | { kind: 'sqlite'; file: string }
  /** a one-connection store as the non-owner app role, so RLS confines the reads (postgres-store.ts) */
  | { kind: 'postgres'; dsn: string; appRole?: string };

/** The list filters of `GET /v1/audit`, applied inside each seq range (see record-filter.ts `RecordFilter`). */
export interface ExportFilter {
  /** action prefix, e.g. `agent.` */
  action?: string;
  actor?: string;
  target_kind?: string;
  target_id?: string;
  /** occurred_at ≥ since (canonical 9-digit text) */
  since?: string;
  /** occurred_at < until */
  until?: string;
}

/** Encode the records of one chain with seq in [fromSeq, toSeq] (inclusive) in one format. */
export interface EncodePageRequest {
  kind: 'encode-page';
  source: ExportSource;
  tenant: string;
  fromSeq: number;
  toSeq: number;
  /** a ledger-export token already validated by `parseFormatToken('ledger_export', …)` */
  format: string;
  device: DeviceIdentity;
  filter: ExportFilter;
  /**
   * An output buffer handed back from an earlier page (transferred, not copied) for the worker to
   * write into; buffers circulate between the threads so a steady export allocates nothing.
   */
  buffer?: ArrayBuffer;
}

/** The encoded page: UTF-8 lines, each ending in `\n`, in seq order. */
export interface EncodePageResult {
  kind: 'encode-page';
  /** transferred, not copied; the page is its first `length` bytes */
  bytes: ArrayBuffer;
  /** bytes of output; 0 when no record of the range matched */
  length: number;
  count: number;
  /** seq of the last encoded record, or null when none matched */
  lastSeq: number | null;
}
