/**
 * RFC 5424 records: a native record (integrity fields as SD-PARAMs of `[svc@32473 …]`), or an
 * RFC 5424 frame whose MSG is a CEF or LEEF line (spec: syslog rule 1), plus octet-counting framing
 * (RFC 6587 §3.4.1, RFC 5425 §4.3) and the `max_payload_bytes` budget (spec: syslog rule 3).
 */
import { hostname as osHostname } from 'node:os';
import type { EgressEvent, EncodeOptions, Encoder, Severity } from './encoder.js';
import type { AuditRecord } from '../ledger/record.js';
import { encodeCefEvent, encodeCefRecord } from './cef.js';
import { assignFieldKeys, type KeyPolicy } from './field-keys.js';
import { encodeLeefEvent, encodeLeefRecord } from './leef.js';
import { epochMillis, ledgerSeverity, META_ERASED } from './ledger-fields.js';
import { WIRE_ENC, pctC0Encode } from './pct-c0.js';
import { SEVERITY } from './severity.js';

/** Facility local0 (RFC 5424 §6.2.1 Table 1: code 16). */
export const SYSLOG_FACILITY_LOCAL0 = 16;
/** Our private enterprise SD-ID (RFC 5424 §7.2.2; DECISIONS.md "Encoders"). */
export const SD_ID = 'svc@32473';
/** APP-NAME of every record (DECISIONS.md). */
export const APP_NAME = 'svc';
/** MSGID of ledger records (DECISIONS.md). */
export const LEDGER_MSGID = 'audit';

/** Options of the syslog encoders beyond the device identity. */
export interface SyslogEncodeOptions extends EncodeOptions {
  /** HOSTNAME; default the OS host name; `''` or `-` → NILVALUE */
  hostname?: string;
  /** PROCID; default the process id; `''` or `-` → NILVALUE */
  procid?: string;
  /** receiver budget in UTF-8 octets of the complete record; 0 or absent = off */
  maxPayloadBytes?: number;
}

/** A syslog encoder: accepts the syslog options (hostname, procid, max_payload_bytes) beside the device. */
export interface SyslogEncoder extends Encoder {
  encodeRecord(record: AuditRecord, opts: SyslogEncodeOptions): string;
  encodeEvent(event: EgressEvent, opts: SyslogEncodeOptions): string;
}

/** A configured HOSTNAME/PROCID that RFC 5424 does not allow. */
export class SyslogConfigError extends Error {
  override readonly name = 'SyslogConfigError';
  readonly code = 'bad_request';
}

/** A record longer than `max_payload_bytes`: refused, never truncated or sent (spec: syslog rule 3). */
export class SyslogPayloadTooLargeError extends Error {
  override readonly name = 'SyslogPayloadTooLargeError';
  readonly code = 'payload_too_large';
  constructor(readonly size: number, readonly limit: number) {
    super(`syslog record is ${size} octets, over max_payload_bytes ${limit}; not sent`);
  }
}

/** PRI = facility × 8 + severity (RFC 5424 §6.2.1); local0 + the severity map's syslog column, so info = 134. */
export function syslogPri(severity: Severity): number {
  return SYSLOG_FACILITY_LOCAL0 * 8 + SEVERITY[severity].syslog;
}

// PRINTUSASCII = %d33-126 (RFC 5424 §6).
const PRINTUSASCII = /^[\x21-\x7E]*$/;

function headerToken(value: string | undefined, fallback: string, max: number, what: string): string {
  const v = value ?? fallback;
  if (v === '' || v === '-') return '-';
  if (v.length > max || !PRINTUSASCII.test(v)) {
    throw new SyslogConfigError(`${what} must be 1..${max} printable US-ASCII characters (RFC 5424 §6.2), got ${JSON.stringify(v)}`);
  }
  return v;
}

const defaultHostname = ((): string => {
  const h = osHostname();
  // An OS name that RFC 5424 §6.2.4 cannot carry becomes NILVALUE rather than failing every record.
  return h.length > 0 && h.length <= 255 && PRINTUSASCII.test(h) ? h : '-';
})();

/** HOSTNAME field: 1*255 PRINTUSASCII or NILVALUE (RFC 5424 §6.2.4). */
export function syslogHostname(configured?: string): string {
  return headerToken(configured, defaultHostname, 255, 'hostname');
}

/** PROCID field: 1*128 PRINTUSASCII or NILVALUE (RFC 5424 §6.2.6). */
export function syslogProcid(configured?: string): string {
  return headerToken(configured, String(process.pid), 128, 'procid');
}

/**
 * TIMESTAMP (RFC 5424 §6.2.3): the recorded instant with TIME-SECFRAC cut to 6 digits (§6.2.3.1 allows
 * at most 6; truncated, never rounded, so the stamp never moves forward). NILVALUE without a valid
 * recorded time, and for years from 2100 on: rsyslog 8.2302's RFC 5424 parser rejects those and then
 * misreads the whole record as legacy syslog (found by test/encoders/syslog.test.ts). The exact
 * 9-digit text always rides in the `occurred_at` SD-PARAM.
 */
export function syslogTimestamp(rfc3339: string | undefined): string {
  if (rfc3339 === undefined || epochMillis(rfc3339) === null) return '-';
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(rfc3339);
  if (!m || Number(rfc3339.slice(0, 4)) >= 2100) return '-';
  return `${m[1]}.${((m[2] ?? '') + '000000').slice(0, 6)}${m[3]}`;
}

/** SD-PARAM value escaping (RFC 5424 §6.3.3): `\`, `"`, `]` get a backslash; applied after pct-c0-v1. */
export function sdEscape(s: string): string {
  // A replacement pattern, not a callback: every `meta` value has quotes to escape.
  return /[\\"\]]/.test(s) ? s.replace(/[\\"\]]/g, '\\$&') : s;
}

/**
 * PARAM-NAME (RFC 5424 §6.3.3 SD-NAME): printable US-ASCII except `=`, SP, `]`, `"`; those and `\` (kept out for parsers that treat it as
 * an escape) → `_`.
 */
export function sdParamName(key: string): string {
  const s = key.replace(/[^\x21-\x7E]|[=\]"\\]/g, '_');
  return s === '' ? '_' : s;
}

/** MSGID (RFC 5424 §6.2.7): 1*32 PRINTUSASCII; other characters → `_`, cut at 32, empty → NILVALUE. */
export function syslogMsgid(value: string): string {
  const s = value.replace(/[^\x21-\x7E]/g, '_').slice(0, 32);
  return s === '' ? '-' : s;
}

// One test for both layers: most values (ids, hashes) need neither, and skip both passes.
const SD_VALUE_WORK = /[\x00-\x1F\x7F%\\"\]\uD800-\uDFFF]/;

/** One SD-ELEMENT `[svc@32473 k="v" …]`; values pass pct-c0-v1 then SD escaping. */
export function sdElement(params: ReadonlyArray<readonly [string, string]>): string {
  let s = '[' + SD_ID;
  for (const [k, v] of params) s += ' ' + k + '="' + (SD_VALUE_WORK.test(v) ? sdEscape(pctC0Encode(v)) : v) + '"';
  return s + ']';
}

interface Head {
  severity: Severity;
  time: string | undefined;
  msgid: string;
}

/** The RFC 5424 HEADER SP STRUCTURED-DATA [SP MSG] (§6); MSG is sent as MSG-ANY, without a BOM. */
function record(h: Head, sd: string, msg: string, opts: SyslogEncodeOptions): string {
  const line =
    `<${syslogPri(h.severity)}>1 ${syslogTimestamp(h.time)} ${syslogHostname(opts.hostname)} ${APP_NAME} ` +
    `${syslogProcid(opts.procid)} ${h.msgid} ${sd}` + (msg === '' ? '' : ' ' + msg);
  checkPayloadBudget(line, opts.maxPayloadBytes ?? 0);
  return line;
}

/** Refuses a record over the budget, measured on the complete record in UTF-8 octets (spec: syslog rule 3). */
export function checkPayloadBudget(line: string, maxPayloadBytes: number): void {
  if (maxPayloadBytes > 0) {
    // Every UTF-16 unit is at most 3 octets: skip the exact count when it cannot exceed.
    if (line.length * 3 <= maxPayloadBytes) return;
    const size = Buffer.byteLength(line, 'utf8');
    if (size > maxPayloadBytes) throw new SyslogPayloadTooLargeError(size, maxPayloadBytes);
  }
}

/** Octet-counting frame `MSG-LEN SP SYSLOG-MSG` (RFC 6587 §3.4.1, RFC 5425 §4.3). */
export function octetCountingFrame(line: string): Buffer {
  const body = Buffer.from(line, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `, 'latin1'), body]);
}

/** The `MSG-LEN SP` of a line's octet-counting frame, for callers that frame many lines into one buffer. */
export function octetCountingPrefix(line: string): string {
  return `${Buffer.byteLength(line, 'utf8')} `;
}

/** SD-PARAMs of a ledger record: wire_enc, then every field the hash covers and the integrity fields. */
export function syslogRecordParams(r: AuditRecord): Array<[string, string]> {
  const p: Array<[string, string]> = [
    ['wire_enc', WIRE_ENC],
    ['id', r.id],
    ['seq', String(r.seq)],
    ['tenant', r.tenant],
    ['occurred_at', r.occurred_at],
    ['actor', r.actor],
    ['actor_kind', r.actor_kind],
    ['action', r.action],
    ['target_kind', r.target_kind],
    ['target_id', r.target_id],
  ];
  if (r.meta !== null) p.push(['meta', r.meta]);
  else p.push(['meta_erased', META_ERASED]);
  p.push(['meta_commitment', r.meta_commitment]);
  if (r.payload_hash !== null) p.push(['payload_hash', r.payload_hash]);
  p.push(['prev_hash', r.prev_hash], ['hash', r.hash], ['sig', r.sig], ['key_id', r.key_id]);
  return p;
}

const SD_EVENT_POLICY: KeyPolicy = {
  sanitize: sdParamName,
  reserved: new Set(['wire_enc', 'id', 'type', 'tenant', 'time']),
  maxLength: 32,
};

/** SD-PARAMs of an egress event: fixed names, then its own fields (sanitised, ≤ 32 characters, unique). */
export function syslogEventParams(e: EgressEvent): Array<[string, string]> {
  const p: Array<[string, string]> = [['wire_enc', WIRE_ENC], ['id', e.id], ['type', e.type]];
  if (e.tenant !== undefined) p.push(['tenant', e.tenant]);
  if (e.time !== undefined) p.push(['time', e.time]);
  const used = new Set<string>(SD_EVENT_POLICY.reserved);
  return p.concat(assignFieldKeys(e.fields, SD_EVENT_POLICY, used));
}

/** Native RFC 5424 record of a ledger record; MSG is the action. */
export function encodeSyslogRecord(r: AuditRecord, opts: SyslogEncodeOptions): string {
  const head = { severity: ledgerSeverity(r), time: r.occurred_at, msgid: LEDGER_MSGID };
  return record(head, sdElement(syslogRecordParams(r)), pctC0Encode(r.action), opts);
}

/** `HOSTNAME SP APP-NAME SP PROCID` per options object (the export passes one per page). */
const hostAppProc = new WeakMap<SyslogEncodeOptions, string>();

const sdValue = (v: string): string => (SD_VALUE_WORK.test(v) ? sdEscape(pctC0Encode(v)) : v);

/**
 * {@link encodeSyslogRecord} for a record read by the export (export-source.ts `LedgerReader.each`),
 * byte for byte the same line, without the parameter arrays: the free texts and the tenant go
 * through the value layers one by one (`meta` always has quotes to escape, so one scan of the row
 * would not help), the fields the reader makes from hex, digits and base64 (`id`, hashes, `seq`,
 * `sig`, `key_id`) hold nothing either layer touches and pass as they are. Without `text` (a
 * record the reader read per column, or one from elsewhere) the reference encoder runs.
 */
export function encodeSyslogStoredRecord(r: AuditRecord, opts: SyslogEncodeOptions, text: string | undefined): string {
  if (text === undefined) return encodeSyslogRecord(r, opts);
  let hap = hostAppProc.get(opts);
  if (hap === undefined) {
    hap = `${syslogHostname(opts.hostname)} ${APP_NAME} ${syslogProcid(opts.procid)}`;
    hostAppProc.set(opts, hap);
  }
  // Parameters and order exactly as syslogRecordParams; framing as record().
  let sd =
    '[' + SD_ID + ' wire_enc="' + WIRE_ENC + '" id="' + r.id + '" seq="' + String(r.seq) + '" tenant="' + sdValue(r.tenant) +
    '" occurred_at="' + sdValue(r.occurred_at);
  sd +=
    '" actor="' + sdValue(r.actor) + '" actor_kind="' + sdValue(r.actor_kind) + '" action="' + sdValue(r.action) + '" target_kind="' +
    sdValue(r.target_kind) + '" target_id="' + sdValue(r.target_id);
  if (r.meta !== null) sd += '" meta="' + sdValue(r.meta);
  else sd += '" meta_erased="' + META_ERASED;
  sd += '" meta_commitment="' + r.meta_commitment;
  if (r.payload_hash !== null) sd += '" payload_hash="' + r.payload_hash;
  sd += '" prev_hash="' + r.prev_hash + '" hash="' + r.hash + '" sig="' + r.sig + '" key_id="' + r.key_id + '"]';
  const msg = pctC0Encode(r.action);
  const line =
    '<' + String(syslogPri(ledgerSeverity(r))) + '>1 ' + syslogTimestamp(r.occurred_at) + ' ' + hap + ' ' + LEDGER_MSGID + ' ' + sd +
    (msg === '' ? '' : ' ' + msg);
  checkPayloadBudget(line, opts.maxPayloadBytes ?? 0);
  return line;
}

/** Native RFC 5424 record of an egress event; MSGID from the type, MSG is the title. */
export function encodeSyslogEvent(e: EgressEvent, opts: SyslogEncodeOptions): string {
  const head = { severity: e.severity, time: e.time, msgid: syslogMsgid(e.type) };
  return record(head, sdElement(syslogEventParams(e)), pctC0Encode(e.title), opts);
}

type Carried = 'cef' | 'leef';
const carriers = {
  cef: { record: encodeCefRecord, event: encodeCefEvent },
  leef: { record: encodeLeefRecord, event: encodeLeefEvent },
} as const;

/** An RFC 5424 frame (NILVALUE structured data) whose MSG is a CEF or LEEF line (spec: syslog rule 1). */
function carrierEncoder(token: Carried): SyslogEncoder {
  const c = carriers[token];
  return Object.freeze({
    token,
    contentType: 'text/plain; charset=utf-8',
    json: false,
    encodeRecord(r: AuditRecord, opts: SyslogEncodeOptions): string {
      return record({ severity: ledgerSeverity(r), time: r.occurred_at, msgid: LEDGER_MSGID }, '-', c.record(r, opts), opts);
    },
    encodeEvent(e: EgressEvent, opts: SyslogEncodeOptions): string {
      return record({ severity: e.severity, time: e.time, msgid: syslogMsgid(e.type) }, '-', c.event(e, opts), opts);
    },
  });
}

/** The `syslog` format: a native RFC 5424 record. */
export const syslogEncoder: SyslogEncoder = Object.freeze({
  token: 'syslog',
  contentType: 'text/plain; charset=utf-8',
  json: false,
  encodeRecord: encodeSyslogRecord,
  encodeStoredRecord: encodeSyslogStoredRecord,
  encodeEvent: encodeSyslogEvent,
});

/** `cef` on the syslog connector: a CEF line as the MSG of an RFC 5424 frame. */
export const syslogCefEncoder: SyslogEncoder = carrierEncoder('cef');
/** `leef` on the syslog connector: a LEEF line as the MSG of an RFC 5424 frame. */
export const syslogLeefEncoder: SyslogEncoder = carrierEncoder('leef');
