/**
 * Keys for an event's own fields in key=value dialects (CEF extension, LEEF attributes, RFC 5424
 * SD-PARAMs): sanitised so they cannot break the line, and re-keyed when they would collide with a
 * key the encoder emits itself, so an event field can never override a normalised value.
 */

/** A flat displayable field value (EgressEvent.fields). */
export type FieldValue = string | number | boolean | null;

/** How one dialect sanitises and protects keys. */
export interface KeyPolicy {
  /** dialect-safe spelling of a raw key (never empty) */
  sanitize(key: string): string;
  /** lower-case keys the encoder emits itself; a colliding event field is prefixed `olv` */
  reserved: ReadonlySet<string>;
  /** lower-case key → fixed replacement (LEEF: `sev` → `olvSev`, spec LEEF rule 3) */
  rekey?: ReadonlyMap<string, string>;
  /** longest key the dialect allows (RFC 5424 PARAM-NAME: 32) */
  maxLength?: number;
}

/** CEF v27 / LEEF key rule (DECISIONS.md "Encoders"): `=`, space, `|`, `\` and controls → `_`. */
export function sanitizeKvKey(key: string): string {
  const s = key.replace(/[=\s|\\\x00-\x1F\x7F]/g, '_');
  return s === '' ? '_' : s;
}

const upperFirst = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function fit(key: string, max: number | undefined): string {
  return max !== undefined && key.length > max ? key.slice(0, max) : key;
}

/**
 * Assigns each non-null field a unique dialect key, in the fields' own order.
 * `used` holds the lower-case keys already on the line; it is extended in place.
 * Uniqueness is case-insensitive because receivers (QRadar, rsyslog's mmpstrucdata) may fold case.
 */
export function assignFieldKeys(
  fields: Readonly<Record<string, FieldValue>>,
  policy: KeyPolicy,
  used: Set<string>,
): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [raw, value] of Object.entries(fields)) {
    if (value === null || value === undefined) continue;
    let key = fit(policy.sanitize(raw), policy.maxLength);
    const lower = key.toLowerCase();
    const fixed = policy.rekey?.get(lower);
    if (fixed !== undefined) key = fixed;
    else if (policy.reserved.has(lower)) key = fit('olv' + upperFirst(key), policy.maxLength);
    let candidate = key;
    for (let n = 2; used.has(candidate.toLowerCase()); n++) {
      const suffix = `_${n}`;
      candidate = fit(key, policy.maxLength === undefined ? undefined : policy.maxLength - suffix.length) + suffix;
    }
    used.add(candidate.toLowerCase());
    out.push([candidate, String(value)]);
  }
  return out;
}
