/**
 * LEEF 2.0 (IBM QRadar "Log Event Extended Format" version 2): one line per record with the TAB
 * delimiter declared in the header as `0x09`. Values pass the `pct-c0-v1` layer, which turns every
 * TAB, CR and LF into `%09`, `%0D`, `%0A`, so no value can contain the delimiter or end the line.
 */
import type { DeviceIdentity, EgressEvent, EncodeOptions, Encoder } from './encoder.js';
import type { AuditRecord } from '../ledger/record.js';
import { assignFieldKeys, sanitizeKvKey, type KeyPolicy } from './field-keys.js';
import { ENCODER_MEMO_LIMIT, epochMillis, ledgerSeverity, olvRecordPairs, META_ERASED } from './ledger-fields.js';
import { WIRE_ENC, pctC0Encode } from './pct-c0.js';
import { SEVERITY } from './severity.js';

/** The attribute delimiter (DECISIONS.md "Encoders": LEEF 2.0 with delimiter 0x09). */
export const LEEF_DELIMITER = '\t';

/**
 * Header escaping: LEEF 2.0 "LEEF event components" requires a `|` inside a header field to be
 * escaped with `\`; `\` itself is escaped too so a field ending in `\` cannot swallow the separator.
 */
export function leefEscapeHeader(s: string): string {
  return /[\\|]/.test(s) ? s.replace(/[\\|]/g, '\\$&') : s;
}

/**
 * `devTime` as a 13-digit epoch in milliseconds (spec: LEEF rule 2), zero-padded before 2001-09-09;
 * null (the attribute is omitted, never invented) without a recorded time or outside 0..9999999999999.
 */
export function leefDevTime(rfc3339: string | undefined): string | null {
  if (rfc3339 === undefined) return null;
  const ms = epochMillis(rfc3339);
  if (ms === null || ms < 0 || ms > 9_999_999_999_999) return null;
  return String(ms).padStart(13, '0');
}

/** The LEEF 2.0 header with the declared delimiter (LEEF 2.0 "LEEF event components"). */
function header(opts: EncodeOptions, eventId: string): string {
  const d = opts.device;
  return (
    'LEEF:2.0|' +
    leefEscapeHeader(pctC0Encode(d.vendor)) + '|' +
    leefEscapeHeader(pctC0Encode(d.product)) + '|' +
    leefEscapeHeader(pctC0Encode(d.version)) + '|' +
    leefEscapeHeader(pctC0Encode(eventId)) + '|0x09|'
  );
}

/** Joins attributes with the delimiter; values get only the `pct-c0-v1` layer (LEEF has no value escapes). */
export function leefLine(hdr: string, attrs: ReadonlyArray<readonly [string, string]>): string {
  let line = hdr;
  let first = true;
  for (const [k, v] of attrs) {
    line += (first ? '' : LEEF_DELIMITER) + k + '=' + pctC0Encode(v);
    first = false;
  }
  return line;
}

/** Attributes of a ledger record, in the documented order (docs/formats.md). */
export function leefRecordAttributes(r: AuditRecord): Array<[string, string]> {
  const attrs: Array<[string, string]> = [['sev', String(SEVERITY[ledgerSeverity(r)].leef)]];
  const devTime = leefDevTime(r.occurred_at);
  if (devTime !== null) attrs.push(['devTime', devTime]);
  attrs.push(['cat', r.action], ['usrName', r.actor], ['externalId', r.id], ...olvRecordPairs(r));
  return attrs;
}

/**
 * Event fields named `sev`, `devTime`, `devTimeFormat` in any capitalisation are re-keyed so they
 * cannot override the normalised values (spec: LEEF rule 3); a field already named like a re-keyed
 * target or another emitted key is prefixed `olv`.
 */
const LEEF_EVENT_POLICY: KeyPolicy = {
  sanitize: sanitizeKvKey,
  rekey: new Map([
    ['sev', 'olvSev'],
    ['devtime', 'olvDevTime'],
    ['devtimeformat', 'olvDevTimeFormat'],
  ]),
  reserved: new Set(['cat', 'externalid', 'olvtitle', 'olvwireenc', 'olvtenant', 'olvsev', 'olvdevtime', 'olvdevtimeformat']),
};

/** Attributes of an egress event: normalised keys, then the event's own fields. */
export function leefEventAttributes(e: EgressEvent): Array<[string, string]> {
  const attrs: Array<[string, string]> = [['sev', String(SEVERITY[e.severity].leef)]];
  const devTime = leefDevTime(e.time);
  if (devTime !== null) attrs.push(['devTime', devTime]);
  attrs.push(['cat', e.type], ['externalId', e.id], ['olvTitle', e.title]);
  if (e.tenant !== undefined) attrs.push(['olvTenant', e.tenant]);
  // Only keys actually on the line; the re-key targets stay free for the fields re-keyed into them.
  const used = new Set<string>(['sev', 'devtime', 'devtimeformat', 'cat', 'externalid', 'olvtitle', 'olvwireenc', 'olvtenant']);
  return attrs.concat(assignFieldKeys(e.fields, LEEF_EVENT_POLICY, used), [['olvWireEnc', WIRE_ENC]]);
}

/** LEEF 2.0 line for a ledger record; EventID = action. */
export function encodeLeefRecord(r: AuditRecord, opts: EncodeOptions): string {
  return leefLine(header(opts, r.action), leefRecordAttributes(r));
}

/** LEEF 2.0 line for an egress event; EventID = type. */
export function encodeLeefEvent(e: EgressEvent, opts: EncodeOptions): string {
  return leefLine(header(opts, e.type), leefEventAttributes(e));
}

// What the `pct-c0-v1` layer touches (LEEF values have no escaping of their own); U+0001 is the reader's separator.
const ROW_WORK = /[\x00\x02-\x1F\x7F%\uD800-\uDFFF]/;

/** Record headers per device identity and action (see cef.ts `recordHeader`: the same memo). */
const recordHeaders = new WeakMap<DeviceIdentity, Map<string, string>>();

function recordHeader(opts: EncodeOptions, action: string): string {
  let byAction = recordHeaders.get(opts.device);
  if (byAction === undefined) {
    byAction = new Map();
    recordHeaders.set(opts.device, byAction);
  }
  let hdr = byAction.get(action);
  if (hdr === undefined) {
    hdr = header(opts, action);
    if (byAction.size >= ENCODER_MEMO_LIMIT) byAction.clear();
    byAction.set(action, hdr);
  }
  return hdr;
}

/** The last tenant {@link encodeLeefStoredRecord} found clean (the export passes one per page). */
let cleanTenant = '';

/**
 * {@link encodeLeefRecord} for a record read by the export (see cef.ts `encodeCefStoredRecord`):
 * byte for byte the same line. When neither `text` (every free-text field) nor the tenant holds a
 * character `pct-c0-v1` touches, the values pass unchanged (the other fields are hex, a dashed id,
 * digits and base64) and the line is concatenated directly; otherwise the reference encoder runs.
 */
export function encodeLeefStoredRecord(r: AuditRecord, opts: EncodeOptions, text: string | undefined): string {
  if (text === undefined || ROW_WORK.test(text)) return encodeLeefRecord(r, opts);
  if (r.tenant !== cleanTenant) {
    if (ROW_WORK.test(r.tenant) || r.tenant.includes('\u0001')) return encodeLeefRecord(r, opts);
    cleanTenant = r.tenant;
  }
  const devTime = leefDevTime(r.occurred_at);
  // Attributes and order exactly as leefRecordAttributes + olvRecordPairs.
  let line =
    recordHeader(opts, r.action) + 'sev=' + String(SEVERITY[ledgerSeverity(r)].leef) + (devTime !== null ? '\tdevTime=' + devTime : '');
  line +=
    '\tcat=' + r.action + '\tusrName=' + r.actor + '\texternalId=' + r.id + '\tolvOccurredAt=' + r.occurred_at + '\tolvSeq=' +
    String(r.seq) + '\tolvTenant=' + r.tenant;
  line += '\tolvActorKind=' + r.actor_kind + '\tolvTargetKind=' + r.target_kind + '\tolvTargetId=' + r.target_id;
  if (r.meta !== null) line += '\tolvMeta=' + r.meta;
  else line += '\tolvMetaErased=' + META_ERASED;
  line += '\tolvMetaCommitment=' + r.meta_commitment;
  if (r.payload_hash !== null) line += '\tolvPayloadHash=' + r.payload_hash;
  return (
    line + '\tolvPrevHash=' + r.prev_hash + '\tolvHash=' + r.hash + '\tolvSig=' + r.sig + '\tolvKeyId=' + r.key_id + '\tolvWireEnc=' +
    WIRE_ENC
  );
}

/** The `leef` format. */
export const leefEncoder: Encoder = Object.freeze({
  token: 'leef',
  contentType: 'text/plain; charset=utf-8',
  json: false,
  encodeRecord: encodeLeefRecord,
  encodeStoredRecord: encodeLeefStoredRecord,
  encodeEvent: encodeLeefEvent,
});
