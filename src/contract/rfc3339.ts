/**
 * RFC 3339 date-times on input, in any of their forms (issue 30 item 6): any number of fractional
 * digits or none, `Z` or a numeric offset, `T` or `t`. Stored and answered in the one form the
 * service uses everywhere (DECISIONS.md Conventions): UTC with exactly nine fractional digits.
 */
import { Text } from './common.js';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** A request field that takes an RFC 3339 date-time (normalise with {@link normalizeRfc3339}). */
export const Rfc3339 = Text({
  pattern: RFC3339.source,
  description: 'RFC 3339 date-time, e.g. 2027-01-01T00:00:00Z or 2027-01-01T01:00:00.5+01:00; answered as UTC with 9 fractional digits',
});

/** `2027-01-01T01:00:00.5+01:00` → `2027-01-01T00:00:00.500000000Z`; undefined for an impossible date. */
export function normalizeRfc3339(text: string): string | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string | undefined,
    string,
  ];
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  // Leap seconds (:60) are refused: no clock the service compares with shows one.
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(local);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  let offsetMin = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const [oh, om] = zone.slice(1).split(':').map(Number) as [number, number];
    if (oh > 23 || om > 59) return undefined;
    offsetMin = sign * (oh * 60 + om);
  }
  const utc = new Date(local - offsetMin * 60_000);
  if (utc.getUTCFullYear() < 1 || utc.getUTCFullYear() > 9999) return undefined;
  return `${utc.toISOString().slice(0, 19)}.${frac.padEnd(9, '0')}Z`;
}
