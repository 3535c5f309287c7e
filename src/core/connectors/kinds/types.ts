/**
 * The seam between the connector runtime and one kind of receiver (syslog, filelog, splunkhec,
 * s3archive, siem, otlp, search, chronicle). The runtime owns configuration, secrets, the delivery
 * engine (claims, order, retry ladder, `dead`, redelivery), the ledger forwarder's cursor and
 * health; a kind only knows how to put one batch of already-encoded items on its wire and how to
 * read the receiver's answer.
 */
import type { TSchema } from 'typebox';
import type { Surface } from '../../../encoders/registry.js';

/** One record to deliver, already rendered in the connector's format (no trailing newline). */
export interface SinkItem {
  /** the encoded record: a syslog/CEF/LEEF line, a JSON document, an OTLP LogRecord object, an ECS or UDM document */
  line: string;
  /** stable identity for receivers that deduplicate: `<tenant>:<seq>` for ledger records, the event id otherwise */
  id: string;
  tenant: string;
  /** the ledger seq, for ledger records */
  seq?: number;
  /** RFC 3339 time of the record, when it has one */
  time?: string;
}

/** How a batch went. The engine retries `retry`, dead-letters after the ladder, and stops at `failed`. */
export interface SinkResult {
  result: 'delivered' | 'retry' | 'failed';
  /** the receiver's status (HTTP status, HEC `code`, …) when it answered */
  status?: number;
  /** what went wrong, never a secret or a record's content */
  error?: string;
  /** the receiver's `Retry-After`, in ms */
  retryAfterMs?: number;
  /**
   * Items the receiver refused although the batch as a whole was accepted (OTLP partial success,
   * `_bulk` item errors, HEC per-event errors): indexes into the batch with the receiver's message.
   * The runtime records them as failed deliveries; the rest of the batch counts as delivered.
   */
  rejected?: Array<{ index: number; error: string }>;
  /** what a batch left behind at the receiver, for the delivery row (s3archive: object key and sha256) */
  artifacts?: Array<{ key: string; sha256: string; items: number; bytes: number }>;
}

/** An open connection (or client) to one receiver. One batch at a time; the runtime never overlaps calls. */
export interface ConnectorSink {
  send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult>;
  /**
   * Optional (added by the runtime branch): why one item can never be delivered by this sink (syslog:
   * over `max_payload_bytes`), or undefined when it can. The runtime moves such an item into a
   * delivery of its own (retried, then dead) so the rest of its batch goes on; `send` must still
   * refuse such an item rather than truncate or send it.
   */
  check?(item: SinkItem): string | undefined;
  close(): Promise<void>;
}

/** What a kind may use when it opens. */
export interface KindContext {
  /** the value of a secret reference (`secret:<name>`); throws `SecretUnavailableError` when it is gone (fail closed) */
  secret(ref: string): Promise<string>;
  /** the service's data directory (filelog relative paths, CA files) */
  dataDir: string;
  /** svc's version, for User-Agent and device fields */
  version: string;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export interface ConnectorKind<C = Record<string, unknown>> {
  kind: string;
  /** where its `format` token is checked (encoders/registry.ts), or a fixed rendering the kind needs */
  format: { surface: Surface } | { fixed: string };
  /** the kind's `config` object (typebox; unknown fields refused) */
  configSchema: TSchema;
  /** config fields that hold secret references (`secret:<name>`), validated to exist at configuration time */
  secretFields: readonly string[];
  /** checks beyond the schema (e.g. TLS never downgraded); returns messages, empty when fine */
  validate?(config: C): string[];
  /** the largest batch the kind takes in one `send` */
  maxBatch: number;
  open(config: C, ctx: KindContext): Promise<ConnectorSink>;
}
