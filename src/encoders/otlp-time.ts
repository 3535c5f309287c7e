/**
 * OTLP timestamps: `fixed64` nanoseconds since the Unix epoch, written as a decimal string
 * (protobuf JSON mapping of 64-bit integers). Spec: Events → OTLP rules, rule 4.
 *
 * The earlier encoding was a signed 64-bit nanosecond count (Go `time.UnixNano()` cast to u64, with
 * the zero time mapped to 0). It is reproduced byte for byte where it was well defined:
 *   - the zero time (`0001-01-01T00:00:00Z`, Go's `time.Time{}`) → "0";
 *   - from the epoch through 2262-04-11T23:47:16.854775807Z (2^63-1 ns) → the exact count.
 * Where it was not well defined we correct it:
 *   - a pre-epoch instant cannot be represented in an unsigned count (the old cast wrapped it to a
 *     huge bogus future time, ~2554). We emit 0, which OTLP defines as "unknown", instead of a
 *     fabricated or wrapped time; the original instant still travels verbatim in the
 *     `svc.audit.occurred_at` attribute, so nothing is lost.
 *   - 2262-04-11T23:47:16.854775808Z through 2554-07-21T23:34:33.709551615Z (2^64-1 ns) is exact
 *     (computed with BigInt; a JS number would lose precision above 2^53).
 *   - past 2554-07-21T23:34:33.709551615Z → 0 (unknown), as the spec states.
 *   - an absent or unparseable time → 0 (never fabricated).
 */

/** 2^64 - 1: the last nanosecond an OTLP `fixed64` can hold (2554-07-21T23:34:33.709551615Z). */
export const OTLP_MAX_UNIX_NANO = (1n << 64n) - 1n;
/** 2^63 - 1: the end of the earlier signed encoding (2262-04-11T23:47:16.854775807Z). */
export const INT64_MAX_UNIX_NANO = (1n << 63n) - 1n;

const NS_PER_SECOND = 1_000_000_000n;

// RFC 3339 §5.6 date-time; `T`/`Z` case-insensitive per its note. Fractions beyond 9 digits are
// accepted and truncated (OTLP resolution is 1 ns).
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant, days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Parsed instant: signed nanoseconds since the epoch, plus the written UTC offset in minutes. */
export interface ParsedInstant {
  unixNano: bigint;
  offsetMinutes: number;
}

/**
 * Parse an RFC 3339 date-time to signed nanoseconds since the epoch; null when it is not a valid
 * RFC 3339 instant (a leap second `:60` is refused: it has no Unix-time representation).
 */
export function parseRfc3339(text: string): ParsedInstant | null {
  const m = RFC3339.exec(text);
  if (m === null) return null;
  const [, ys, mos, ds, hs, mis, ss, frac, z, sign, oh, om] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (z === undefined) {
    const offH = Number(oh);
    const offM = Number(om);
    if (offH > 23 || offM > 59) return null;
    offsetMinutes = (sign === '-' ? -1 : 1) * (offH * 60 + offM);
  }
  const seconds =
    BigInt(daysFromCivil(year, month, day)) * 86_400n +
    BigInt(hour * 3600 + minute * 60 + second) -
    BigInt(offsetMinutes * 60);
  const nanos = frac === undefined ? 0n : BigInt(frac.slice(0, 9).padEnd(9, '0'));
  return { unixNano: seconds * NS_PER_SECOND + nanos, offsetMinutes };
}

/** Go's zero time, 0001-01-01T00:00:00Z, in signed Unix nanoseconds. */
const ZERO_TIME_UNIX_NANO = BigInt(daysFromCivil(1, 1, 1)) * 86_400n * NS_PER_SECOND;

/** Map signed Unix nanoseconds to the OTLP u64 per spec OTLP rule 4 (see the file header). */
export function otlpNanosFromUnixNano(unixNano: bigint): bigint {
  if (unixNano === ZERO_TIME_UNIX_NANO) return 0n;
  if (unixNano < 0n) return 0n;
  if (unixNano > OTLP_MAX_UNIX_NANO) return 0n;
  return unixNano;
}

/** The `timeUnixNano` string for an RFC 3339 instant; "0" (unknown) when absent, invalid or out of range. */
export function otlpTimeUnixNano(text: string | undefined | null): string {
  if (text === undefined || text === null) return '0';
  const parsed = parseRfc3339(text);
  if (parsed === null) return '0';
  return otlpNanosFromUnixNano(parsed.unixNano).toString();
}
