/**
 * `json` (spec: Formats rule 2). Two encoders share the token on different surfaces:
 *  - `jsonEncoder` (eventing sink `sink_format=json`): the raw captured event envelope, posted
 *    without transform. It has no ledger form: ledger export has no raw JSON passthrough (rule 1),
 *    so `encodeRecord` refuses instead of inventing one.
 *  - `jsonProjectionEncoder` (notification connectors, and the ledger forwarder over them): a
 *    minimal projection of displayable fields; a ledger record also carries its integrity fields.
 */
import type { Encoder, EgressEvent } from './encoder.js';
import { integrityFields, ledgerSeverity } from './ledger-fields.js';
import { toJsonLine } from './json-line.js';
import type { AuditRecord } from '../ledger/record.js';

/** Thrown when a `json` encode is asked for something it must not invent. */
export class JsonEncodeError extends Error {
  override readonly name = 'JsonEncodeError';
}

/** `json` on the eventing sink: the captured envelope verbatim (one object per line). */
export const jsonEncoder: Encoder = {
  token: 'json',
  contentType: 'application/x-ndjson',
  json: true,
  encodeRecord(): string {
    throw new JsonEncodeError('json: ledger records have no raw JSON passthrough (spec Events → Formats, rule 1)');
  },
  encodeEvent(event: EgressEvent): string {
    const raw = event.raw;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      // never fall back to a projection: the sink promised the envelope (rule 3: no silent fall-back)
      throw new JsonEncodeError(`json: event ${event.id} has no captured envelope object to post`);
    }
    // Key order and values are kept; the only change is framing-level: lone surrogates become
    // U+FFFD and U+2028/2029/NEL/DEL are \u-escaped (json-line.ts), which a JSON parser reads back
    // as the same characters (lone surrogates excepted, which have no UTF-8 form at all).
    return toJsonLine(raw);
  },
};

/** The projection of a ledger record: displayable fields plus the integrity fields, verbatim. */
export function projectRecord(record: AuditRecord): Record<string, unknown> {
  return {
    id: record.id,
    type: record.action,
    time: record.occurred_at,
    severity: ledgerSeverity(record),
    title: record.action,
    fields: {
      actor: record.actor,
      actor_kind: record.actor_kind,
      target_kind: record.target_kind,
      target_id: record.target_id,
    },
    ...integrityFields(record),
  };
}

/** The projection of an egress event: its displayable fields only (never `raw`). */
export function projectEvent(event: EgressEvent): Record<string, unknown> {
  const out: Record<string, unknown> = { id: event.id, type: event.type };
  if (event.time !== undefined) out['time'] = event.time;
  out['severity'] = event.severity;
  if (event.tenant !== undefined) out['tenant'] = event.tenant;
  out['title'] = event.title;
  out['fields'] = event.fields;
  return out;
}

/** `json` on notification connectors: minimal projection of displayable fields. */
export const jsonProjectionEncoder: Encoder = {
  token: 'json',
  contentType: 'application/x-ndjson',
  json: true,
  encodeRecord(record: AuditRecord): string {
    return toJsonLine(projectRecord(record));
  },
  encodeEvent(event: EgressEvent): string {
    return toJsonLine(projectEvent(event));
  },
};
