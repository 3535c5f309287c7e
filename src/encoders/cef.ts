/**
 * CEF:0 (ArcSight "Implementing ArcSight CEF", version 27): mapping of ledger records and egress
 * events to one CEF line. Values first pass the `pct-c0-v1` layer, then CEF escaping
 * (DECISIONS.md "Encoders"); only header fields are ever truncated (spec: CEF rules).
 */
import type { DeviceIdentity, EgressEvent, EncodeOptions, Encoder } from './encoder.js';
import type { AuditRecord } from '../ledger/record.js';
import { assignFieldKeys, sanitizeKvKey, type KeyPolicy } from './field-keys.js';
import { ENCODER_MEMO_LIMIT, epochMillis, ledgerSeverity, olvRecordPairs, META_ERASED } from './ledger-fields.js';
import { WIRE_ENC, pctC0Encode } from './pct-c0.js';
import { SEVERITY } from './severity.js';
import { truncateUnits } from './truncate.js';

/** Header field maxima (spec: CEF rule 1; CEF v27 "Header Information" field lengths). */
export const CEF_HEADER_MAX = Object.freeze({
  vendor: 63,
  product: 63,
  version: 31,
  signatureId: 1023,
  name: 512,
});

/** The seven CEF prefix fields before the extension (CEF v27 "CEF Header"). */
export interface CefHeader {
  vendor: string;
  product: string;
  version: string;
  signatureId: string;
  name: string;
  /** 0..10 (CEF v27 "Severity"); 0 = Unknown for an undetermined severity */
  severity: number;
}

/** Header escaping (CEF v27 "Character Encoding"): `\` → `\\`, `|` → `\|`. */
export function cefEscapeHeader(s: string): string {
  return /[\\|]/.test(s) ? s.replace(/[\\|]/g, '\\$&') : s;
}

/**
 * Extension value escaping (CEF v27 "Character Encoding"): `\` → `\\`, `=` → `\=`, CR → `\r`,
 * LF → `\n`. `|` is not escaped in the extension. After `pct-c0-v1` no CR/LF remain; the rule is
 * kept so the function is correct on its own.
 */
export function cefEscapeValue(s: string): string {
  if (!/[\\=\r\n]/.test(s)) return s;
  // Replacement patterns, not a callback (every record's base64 `sig` ends in `=`); `\` first, so
  // the backslashes of `\r`/`\n` are not escaped again.
  const t = s.replace(/[\\=]/g, '\\$&');
  return /[\r\n]/.test(t) ? t.replace(/\r/g, '\\r').replace(/\n/g, '\\n') : t;
}

// One test for both layers: most values (ids, hashes) need neither, and skip both passes.
const VALUE_WORK = /[\x00-\x1F\x7F%\\=\uD800-\uDFFF]/;
const cefValue = (v: string): string => (VALUE_WORK.test(v) ? cefEscapeValue(pctC0Encode(v)) : v);

/** A header field: pct-c0 layer, then truncated to its maximum, then escaped (so no escape is split). */
function headerField(value: string, max: number): string {
  return cefEscapeHeader(truncateUnits(pctC0Encode(value), max));
}

/** Assembles a CEF:0 line from a header and already-keyed extension pairs (values raw, not yet encoded). */
export function cefLine(h: CefHeader, ext: ReadonlyArray<readonly [string, string]>): string {
  return devicePart(h) + eventPart(h.signatureId, h.name, h.severity) + cefExtension(ext);
}

/** `CEF:0|vendor|product|version|`. */
function devicePart(d: DeviceIdentity): string {
  return (
    'CEF:0|' + headerField(d.vendor, CEF_HEADER_MAX.vendor) + '|' + headerField(d.product, CEF_HEADER_MAX.product) + '|' +
    headerField(d.version, CEF_HEADER_MAX.version) + '|'
  );
}

/** `signatureId|name|severity|`. */
function eventPart(signatureId: string, name: string, severity: number): string {
  return headerField(signatureId, CEF_HEADER_MAX.signatureId) + '|' + headerField(name, CEF_HEADER_MAX.name) + '|' + String(severity) + '|';
}

/** The extension: `k=v` pairs separated by one space, values through both layers. */
function cefExtension(ext: ReadonlyArray<readonly [string, string]>): string {
  let line = '';
  for (let i = 0; i < ext.length; i++) {
    const [k, v] = ext[i] as readonly [string, string];
    line += (i === 0 ? '' : ' ') + k + '=' + cefValue(v);
  }
  return line;
}

/**
 * The header of a ledger record's line up to the extension, memoised per device identity and
 * action: the header is a pure function of the two (severity derives from the action), and an
 * export page shares one device object across hundreds of records with a handful of actions. The
 * memo treats a device identity object as immutable (the export worker gets a fresh one per page).
 */
const recordHeaders = new WeakMap<DeviceIdentity, Map<string, string>>();

function recordHeader(device: DeviceIdentity, action: string): string {
  let byAction = recordHeaders.get(device);
  if (byAction === undefined) {
    byAction = new Map();
    recordHeaders.set(device, byAction);
  }
  let header = byAction.get(action);
  if (header === undefined) {
    header = devicePart(device) + eventPart(action, action, SEVERITY[ledgerSeverity({ action })].cef);
    if (byAction.size >= ENCODER_MEMO_LIMIT) byAction.clear();
    byAction.set(action, header);
  }
  return header;
}

/** Extension pairs of a ledger record, in the documented order (DECISIONS.md "Encoders", docs/formats.md). */
export function cefRecordExtension(r: AuditRecord): Array<[string, string]> {
  const ext: Array<[string, string]> = [];
  const rt = epochMillis(r.occurred_at);
  // `rt` is decimal epoch milliseconds (spec: CEF rule 4); omitted rather than invented.
  if (rt !== null) ext.push(['rt', String(rt)]);
  ext.push(['externalId', r.id], ['suser', r.actor], ['act', r.action], ...olvRecordPairs(r));
  return ext;
}

/** Keys the event encoder emits itself; `start`/`end` too, since CEF rule 4 fixes their meaning. */
const CEF_EVENT_POLICY: KeyPolicy = {
  sanitize: sanitizeKvKey,
  reserved: new Set(['rt', 'start', 'end', 'externalid', 'cat', 'msg', 'olvwireenc', 'olvtenant']),
};

/** Extension pairs of an egress event: fixed keys, then the event's own fields re-keyed on collision. */
export function cefEventExtension(e: EgressEvent): Array<[string, string]> {
  const ext: Array<[string, string]> = [];
  const rt = e.time === undefined ? null : epochMillis(e.time);
  if (rt !== null) ext.push(['rt', String(rt)]);
  ext.push(['externalId', e.id], ['cat', e.type], ['msg', e.title]);
  if (e.tenant !== undefined) ext.push(['olvTenant', e.tenant]);
  const used = new Set<string>([...CEF_EVENT_POLICY.reserved]);
  // The fixed trailer goes last (see cefRecordExtension): lognormalizer 2.0.6 rejects an empty final value.
  return ext.concat(assignFieldKeys(e.fields, CEF_EVENT_POLICY, used), [['olvWireEnc', WIRE_ENC]]);
}

/** CEF:0 line for a ledger record; signature id and name are the action (full value also in `act`). */
export function encodeCefRecord(r: AuditRecord, opts: EncodeOptions): string {
  return recordHeader(opts.device, r.action) + cefExtension(cefRecordExtension(r));
}

// Anything the value layers touch, in one class: a text without any needs neither layer.
const ROW_WORK = /[\x00\x02-\x1F\x7F%\\=\uD800-\uDFFF]/;

/**
 * A standard base64 text (`Buffer#toString('base64')`) as a CEF extension value: its only character
 * either layer touches is the `=` padding at the end, escaped `\=`.
 */
function cefBase64Value(b64: string): string {
  const n = b64.length;
  if (n === 0 || b64.charCodeAt(n - 1) !== 0x3d) return b64;
  return b64.charCodeAt(n - 2) === 0x3d ? b64.slice(0, n - 2) + '\\=\\=' : b64.slice(0, n - 1) + '\\=';
}

/** Tenants seen clean by {@link encodeCefStoredRecord} (the export passes one per page). */
let cleanTenant = '';

/**
 * {@link encodeCefRecord} for a record read by the export (export-iterator.ts `sqliteStoredRowIterator`),
 * byte for byte the same line: `text` holds every free-text field of the record (the other fields
 * are lowercase hex, a dashed id or digits, and `sig` is standard base64), `tenant` aside. When neither `text` nor the tenant holds
 * a character the `pct-c0-v1` or CEF value layers touch (every record of a normal chain: ids, hashes,
 * a dotted action, canonical JSON without `\`, `%` or `=`), the line is concatenated directly with no
 * per-value escaping and no pair arrays; otherwise, or without `text`, the reference encoder runs.
 */
export function encodeCefStoredRecord(r: AuditRecord, opts: EncodeOptions, text: string | undefined): string {
  if (text === undefined || ROW_WORK.test(text)) return encodeCefRecord(r, opts);
  if (r.tenant !== cleanTenant) {
    if (ROW_WORK.test(r.tenant) || r.tenant.includes('\u0001')) return encodeCefRecord(r, opts);
    cleanTenant = r.tenant;
  }
  const rt = epochMillis(r.occurred_at);
  // Pairs and order exactly as cefRecordExtension + olvRecordPairs.
  let line = recordHeader(opts.device, r.action) + (rt !== null ? 'rt=' + String(rt) + ' externalId=' : 'externalId=') + r.id;
  line +=
    ' suser=' + r.actor + ' act=' + r.action + ' olvOccurredAt=' + r.occurred_at + ' olvSeq=' + String(r.seq) + ' olvTenant=' + r.tenant;
  line += ' olvActorKind=' + r.actor_kind + ' olvTargetKind=' + r.target_kind + ' olvTargetId=' + r.target_id;
  if (r.meta !== null) line += ' olvMeta=' + r.meta;
  else line += ' olvMetaErased=' + META_ERASED;
  line += ' olvMetaCommitment=' + r.meta_commitment;
  if (r.payload_hash !== null) line += ' olvPayloadHash=' + r.payload_hash;
  return (
    line + ' olvPrevHash=' + r.prev_hash + ' olvHash=' + r.hash + ' olvSig=' + cefBase64Value(r.sig) + ' olvKeyId=' + r.key_id +
    ' olvWireEnc=' + WIRE_ENC
  );
}

/** CEF:0 line for an egress event; signature id = type, name = title (full values in `cat`, `msg`). */
export function encodeCefEvent(e: EgressEvent, opts: EncodeOptions): string {
  const { vendor, product, version } = opts.device;
  const severity = SEVERITY[e.severity].cef;
  return cefLine({ vendor, product, version, signatureId: e.type, name: e.title, severity }, cefEventExtension(e));
}

/** The `cef` format. */
export const cefEncoder: Encoder = Object.freeze({
  token: 'cef',
  contentType: 'text/plain; charset=utf-8',
  json: false,
  encodeRecord: encodeCefRecord,
  encodeStoredRecord: encodeCefStoredRecord,
  encodeEvent: encodeCefEvent,
});
