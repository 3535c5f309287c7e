/**
 * The integrity fields every format carries for a ledger record, and the product severity of a
 * ledger record. Shared by the text-line encoders (CEF, LEEF, syslog) and the JSON family
 * (OTLP, OCSF, …) so every format carries the same values verbatim (DECISIONS.md "Encoders").
 */
import type { DeviceIdentity, Severity } from './encoder.js';
import type { AuditRecord } from '../ledger/record.js';
import { WIRE_ENC } from './pct-c0.js';

/**
 * The marker an export line carries in place of `meta` once the record's meta was erased (blind
 * destroyed, commitment kept; docs/compliance.md): `olvMetaErased=true` (CEF, LEEF),
 * `meta_erased="true"` (syslog), attribute `svc.audit.meta_erased` = "true" (OTLP),
 * `unmapped.meta_erased: true` (OCSF). A verifier refuses a line that has both the marker and meta.
 */
export const META_ERASED = 'true';

/** The integrity field names, in the order every format emits them (DECISIONS.md "Encoders"). */
export const INTEGRITY_FIELD_NAMES = [
  'seq',
  'tenant',
  'occurred_at',
  'prev_hash',
  'hash',
  'sig',
  'key_id',
  'payload_hash',
  'meta_commitment',
] as const;

/** One of the integrity field names. */
export type IntegrityFieldName = (typeof INTEGRITY_FIELD_NAMES)[number];

/**
 * The integrity fields of one ledger record, verbatim as stored.
 * `payload_hash` is null when the record vouches for no payload (hashed as 32 zero bytes);
 * text formats omit the key in that case, JSON formats may emit null.
 */
export interface IntegrityFields {
  seq: number;
  tenant: string;
  /** canonical RFC 3339 text with 9 fractional digits: the exact bytes the hash covers */
  occurred_at: string;
  prev_hash: string;
  hash: string;
  sig: string;
  key_id: string;
  payload_hash: string | null;
  meta_commitment: string;
}

/** Picks the integrity fields of a record, never transforming a value. */
export function integrityFields(record: AuditRecord): IntegrityFields {
  return {
    seq: record.seq,
    tenant: record.tenant,
    occurred_at: record.occurred_at,
    prev_hash: record.prev_hash,
    hash: record.hash,
    sig: record.sig,
    key_id: record.key_id,
    payload_hash: record.payload_hash,
    meta_commitment: record.meta_commitment,
  };
}

/** Ledger device identity: vendor `svc`, product `control-plane`, version = the build's version. */
export function ledgerDevice(version: string): DeviceIdentity {
  return { vendor: 'svc', product: 'control-plane', version };
}

/**
 * Words in an action that mark a failed or refused operation → `medium`.
 * Matched against the action split on `.`, `_` and `-` (e.g. `auth.login_failed`, `policy.deny`).
 */
export const FAILURE_WORDS: ReadonlySet<string> = new Set([
  'fail', 'failed', 'failure', 'deny', 'denied', 'reject', 'rejected', 'refused', 'locked', 'lockout', 'error',
]);

/** Words that mark an integrity or security alarm → `high` (e.g. `audit.tamper_detected`). */
export const ALARM_WORDS: ReadonlySet<string> = new Set([
  'tamper', 'tampered', 'breach', 'compromise', 'compromised', 'violation',
]);

/** Words that mark a destructive or credential-changing operation → `low`. */
export const SENSITIVE_WORDS: ReadonlySet<string> = new Set([
  'delete', 'remove', 'revoke', 'erase', 'purge', 'disable', 'suspend', 'rotate', 'export', 'step_up',
]);

/**
 * The product severity of a ledger record, a pure function of `action` alone.
 * Only hashed, never-erased fields decide it (not `meta`, which can be erased), so re-exporting a
 * record always yields the same severity. Alarm words → high, failure words → medium, sensitive
 * verbs → low, anything else → info. A ledger record is never `critical` nor `undetermined`.
 */
export function ledgerSeverity(record: Pick<AuditRecord, 'action'>): Severity {
  let severity = severityByAction.get(record.action);
  if (severity === undefined) {
    severity = actionSeverity(record.action);
    if (severityByAction.size >= ENCODER_MEMO_LIMIT) severityByAction.clear();
    severityByAction.set(record.action, severity);
  }
  return severity;
}

/**
 * Entries an encoder memo holds before it is cleared. Memos live as long as an export thread (across
 * pages); a chain has few distinct actions and days, but a hostile one must not grow them forever.
 */
export const ENCODER_MEMO_LIMIT = 4096;

// Memoised: it is a pure function of the action, and an export asks it once per record.
const severityByAction = new Map<string, Severity>();

function actionSeverity(action: string): Severity {
  const words = action.toLowerCase().split(/[._-]/);
  if (words.some((w) => ALARM_WORDS.has(w))) return 'high';
  if (words.some((w) => FAILURE_WORDS.has(w))) return 'medium';
  if (words.some((w) => SENSITIVE_WORDS.has(w))) return 'low';
  return 'info';
}

/**
 * Epoch milliseconds of a canonical RFC 3339 UTC instant, or null when the text is not one.
 * Fractions below the millisecond are truncated (never rounded, so an instant never moves forward).
 */
export function epochMillis(rfc3339: string): number | null {
  const fast = canonicalEpochMillis(rfc3339);
  return fast !== undefined ? fast : parseEpochMillis(rfc3339);
}

/** Calendar-checked epoch ms of midnight UTC per `YYYY-MM-DD` (null: no such day). */
const midnightByDay = new Map<string, number | null>();

/** Value of the ASCII digits of `s` in [from, to), or -1 if one is not a digit. */
function digits(s: string, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * The fast path of {@link epochMillis} for the ledger's stored form `YYYY-MM-DDTHH:MM:SS.fffffffffZ`
 * (every record has it): digits read in place, the day's calendar check memoised. Returns
 * undefined for any other text (the general parser decides), null exactly where it would.
 */
function canonicalEpochMillis(t: string): number | null | undefined {
  if (t.length !== 30 || t.charCodeAt(10) !== 0x54 /* T */ || t.charCodeAt(19) !== 0x2e /* . */ || t.charCodeAt(29) !== 0x5a /* Z */)
    return undefined;
  if (t.charCodeAt(13) !== 0x3a || t.charCodeAt(16) !== 0x3a || t.charCodeAt(4) !== 0x2d || t.charCodeAt(7) !== 0x2d) return undefined;
  const h = digits(t, 11, 13);
  const mi = digits(t, 14, 16);
  const sec = digits(t, 17, 19);
  const ms = digits(t, 20, 23);
  if (h < 0 || mi < 0 || sec < 0 || ms < 0 || digits(t, 23, 29) < 0) return undefined;
  const day = t.slice(0, 10);
  let midnight = midnightByDay.get(day);
  if (midnight === undefined) {
    midnight = parseEpochMillis(`${day}T00:00:00Z`);
    if (midnightByDay.size >= ENCODER_MEMO_LIMIT) midnightByDay.clear();
    midnightByDay.set(day, midnight);
  }
  if (midnight === null || h > 23 || mi > 59 || sec > 59) return null;
  return midnight + ((h * 60 + mi) * 60 + sec) * 1000 + ms;
}

function parseEpochMillis(rfc3339: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(rfc3339);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone] = m;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999.
  const check = new Date(0);
  check.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  // Reject calendar overflow (2026-02-31 would silently roll into March).
  if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1) return null;
  const base = check.getTime() + ((Number(h) * 60 + Number(mi)) * 60 + Number(s)) * 1000;
  let offset = 0;
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    offset = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  }
  const ms = Number((frac + '000').slice(0, 3));
  return base + ms - offset;
}

/**
 * The `olv*` key/value pairs CEF and LEEF both carry for a ledger record (DECISIONS.md Encoders),
 * in wire order. `olvWireEnc` is always last: a fixed non-empty trailer, so no parser sees an empty
 * or space-ended final value. A null payload hash is absent (hashed as 32 zero bytes), never invented.
 */
export function olvRecordPairs(r: AuditRecord): Array<[string, string]> {
  const pairs: Array<[string, string]> = [
    ['olvOccurredAt', r.occurred_at],
    ['olvSeq', String(r.seq)],
    ['olvTenant', r.tenant],
    ['olvActorKind', r.actor_kind],
    ['olvTargetKind', r.target_kind],
    ['olvTargetId', r.target_id],
  ];
  if (r.meta !== null) pairs.push(['olvMeta', r.meta]);
  else pairs.push(['olvMetaErased', META_ERASED]);
  pairs.push(['olvMetaCommitment', r.meta_commitment]);
  if (r.payload_hash !== null) pairs.push(['olvPayloadHash', r.payload_hash]);
  pairs.push(['olvPrevHash', r.prev_hash], ['olvHash', r.hash], ['olvSig', r.sig], ['olvKeyId', r.key_id], ['olvWireEnc', WIRE_ENC]);
  return pairs;
}
