/**
 * OTLP log records (opentelemetry-proto v1.4.0 `logs.proto` LogRecord) in the OTLP/HTTP JSON
 * encoding: protobuf JSON mapping with lowerCamelCase keys, 64-bit integers as decimal strings,
 * enums as integers, and trace/span ids as lowercase hex (OTLP spec, "JSON Protobuf Encoding").
 * `otlpLogRecordEncoder` emits the bare record, one per line (ledger export only).
 */
import type { EncodeOptions, Encoder } from './encoder.js';
import { entryFromRecord, type EgressEntry, type Scalar } from './egress-entry.js';
import { INTEGRITY_FIELD_NAMES, META_ERASED } from './ledger-fields.js';
import { toJsonLine } from './json-line.js';
import { otlpTimeUnixNano } from './otlp-time.js';
import { SEVERITY } from './severity.js';

/** OTLP `AnyValue` in JSON form; `{}` is the empty value (used for a null). */
export type OtlpAnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | Record<string, never>;

/** OTLP `KeyValue`. */
export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

/** OTLP `LogRecord` in JSON form (only the fields we set). */
export interface OtlpLogRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string;
  body: OtlpAnyValue;
  attributes: OtlpKeyValue[];
  traceId?: string;
  spanId?: string;
}

/** Attribute namespace for ledger fields (DECISIONS.md "Encoders": `svc.audit.<field>`). */
export const AUDIT_ATTR_PREFIX = 'svc.audit.';
/** Attribute namespace for egress-event fields. */
export const EVENT_ATTR_PREFIX = 'svc.event.';

/** The AnyValue of a scalar: integers as `intValue` (int64 → string), other numbers as doubles. */
export function anyValue(v: Scalar): OtlpAnyValue {
  if (v === null) return {};
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Number.isSafeInteger(v)) return { intValue: String(v) };
  // protobuf JSON writes non-finite doubles as the strings "NaN"/"Infinity"; keep them readable
  // as text instead so a receiver never has to special-case them
  return Number.isFinite(v) ? { doubleValue: v } : { stringValue: String(v) };
}

function kv(key: string, v: Scalar): OtlpKeyValue {
  return { key, value: anyValue(v) };
}

function ledgerAttributes(entry: EgressEntry): OtlpKeyValue[] {
  const attrs: OtlpKeyValue[] = [];
  const integ = entry.integrity;
  if (integ !== undefined) {
    // every integrity field verbatim, even a null payload_hash (empty AnyValue), so the key is
    // always present and a receiver can rebuild the hash preimage (DECISIONS.md "Audit ledger")
    for (const name of INTEGRITY_FIELD_NAMES) attrs.push(kv(AUDIT_ATTR_PREFIX + name, integ[name]));
  }
  attrs.push(kv(AUDIT_ATTR_PREFIX + 'id', entry.id));
  attrs.push(kv(AUDIT_ATTR_PREFIX + 'actor', entry.actor ?? ''));
  attrs.push(kv(AUDIT_ATTR_PREFIX + 'actor_kind', entry.actorKind ?? ''));
  attrs.push(kv(AUDIT_ATTR_PREFIX + 'action', entry.name));
  attrs.push(kv(AUDIT_ATTR_PREFIX + 'target_kind', entry.targetKind ?? ''));
  attrs.push(kv(AUDIT_ATTR_PREFIX + 'target_id', entry.targetId ?? ''));
  // canonical meta text, verbatim (it is what the meta commitment covers); null once erased
  attrs.push(kv(AUDIT_ATTR_PREFIX + 'meta', entry.meta ?? null));
  if (integ !== undefined && entry.meta == null) attrs.push(kv(AUDIT_ATTR_PREFIX + 'meta_erased', META_ERASED));
  return attrs;
}

function eventAttributes(entry: EgressEntry): OtlpKeyValue[] {
  const attrs: OtlpKeyValue[] = [
    kv(EVENT_ATTR_PREFIX + 'id', entry.id),
    kv(EVENT_ATTR_PREFIX + 'type', entry.name),
    kv(EVENT_ATTR_PREFIX + 'severity', entry.severity),
  ];
  if (entry.tenant !== undefined) attrs.push(kv(EVENT_ATTR_PREFIX + 'tenant', entry.tenant));
  if (entry.time !== undefined) attrs.push(kv(EVENT_ATTR_PREFIX + 'time', entry.time));
  for (const [k, v] of Object.entries(entry.fields)) attrs.push(kv(`${EVENT_ATTR_PREFIX}fields.${k}`, v));
  return attrs;
}

/** Map one entry to an OTLP LogRecord (pure mapping; framing is `toJsonLine`). */
export function otlpLogRecord(entry: EgressEntry): OtlpLogRecord {
  const sev = SEVERITY[entry.severity];
  const time = otlpTimeUnixNano(entry.time);
  const rec: OtlpLogRecord = {
    timeUnixNano: time,
    // the ledger observes an action when it appends it at `occurred_at`; an event without a
    // recorded time stays 0 (unknown) rather than taking the encode-time clock (pure, reproducible)
    observedTimeUnixNano: time,
    severityNumber: sev.otlpNumber,
    severityText: sev.otlpText,
    body: { stringValue: entry.title },
    attributes: entry.source === 'ledger' ? ledgerAttributes(entry) : eventAttributes(entry),
  };
  if (entry.trace?.trace_id !== undefined) rec.traceId = entry.trace.trace_id;
  if (entry.trace?.span_id !== undefined) rec.spanId = entry.trace.span_id;
  return rec;
}

/** `otlp_log_record`: one bare LogRecord per line (ledger export only; spec Formats table). */
export const otlpLogRecordEncoder: Encoder = {
  token: 'otlp_log_record',
  contentType: 'application/x-ndjson',
  json: true,
  encodeRecord(record, _opts: EncodeOptions): string {
    return toJsonLine(otlpLogRecord(entryFromRecord(record)));
  },
};
