/**
 * Header truncation for text dialects (spec: CEF rules 1–2): a maximum honoured in decoded characters
 * and in UTF-8 octets at the same time, cutting only between whole units (a code point or a
 * `pct-c0-v1` escape `%XX`), never inside one.
 */

/**
 * Longest prefix of a `pct-c0-v1` text whose UTF-8 length is at most `max` octets.
 * UTF-8 octets ≥ UTF-16 code units ≥ code points for every string, so the prefix also holds at most
 * `max` characters however a receiver counts them. Applied before dialect escaping, so an escape
 * (`\|`, `\\`) is never split either.
 */
export function truncateUnits(text: string, max: number): string {
  // Fast path: every UTF-16 unit is ≤ 3 octets, so a short text cannot exceed `max`.
  if (text.length * 3 <= max) return text;
  let octets = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    let width: number;
    let units: number;
    if (c === 0x25 /* % */) {
      // A pct-c0 escape is three ASCII characters that must stay together.
      width = 3;
      units = 3;
    } else if (c < 0x80) {
      width = 1;
      units = 1;
    } else if (c < 0x800) {
      width = 2;
      units = 1;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      const paired = next >= 0xdc00 && next <= 0xdfff;
      width = paired ? 4 : 3;
      units = paired ? 2 : 1;
    } else {
      width = 3;
      units = 1;
    }
    if (octets + width > max) break;
    octets += width;
    i += units;
  }
  return text.slice(0, i);
}
