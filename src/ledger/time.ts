/** Canonical ledger timestamps: RFC 3339 UTC with exactly 9 fractional digits and `Z` (DECISIONS.md "Conventions"). */

/** The only accepted spelling; the ledger hashes this exact text, so no alternative forms are allowed. */
const CANONICAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{9})Z$/;

const NS_PER_MS = 1_000_000n;

// Anchor the monotonic clock to the wall clock, so timestamps have sub-millisecond precision
// (process.hrtime is ns, Date is ms) and never go backwards even if the wall clock is stepped back.
// The monotonic clock stops while the host is suspended (a paused VM, a laptop asleep) and ignores
// steps of the wall clock, so the anchor is taken again whenever the two part by more than
// REANCHOR_NS: a server that ran across a suspend would otherwise stamp records late by its length.
let anchorWallNs = BigInt(Date.now()) * NS_PER_MS;
let anchorMonoNs = process.hrtime.bigint();
let lastNs = 0n;
const REANCHOR_NS = 5n * NS_PER_MS;

/** Current time as epoch nanoseconds; strictly increasing within the process. */
export function nowEpochNs(): bigint {
  const mono = process.hrtime.bigint();
  let ns = anchorWallNs + (mono - anchorMonoNs);
  const wall = BigInt(Date.now()) * NS_PER_MS;
  // Date.now() truncates to the millisecond: ns is normally in [wall, wall + 1 ms).
  if (ns < wall - REANCHOR_NS || ns > wall + REANCHOR_NS) {
    anchorWallNs = wall;
    anchorMonoNs = mono;
    ns = wall;
  }
  if (ns <= lastNs) ns = lastNs + 1n;
  lastNs = ns;
  return ns;
}

/** Current time as canonical text; strictly increasing within the process. */
export function nowTimestamp(): string {
  return formatTimestamp(nowEpochNs());
}

/** Format epoch nanoseconds as canonical text (years 0000–9999 only, as RFC 3339 §5.6 allows). */
export function formatTimestamp(epochNs: bigint): string {
  const ms = epochNs / NS_PER_MS;
  let subMs = epochNs % NS_PER_MS;
  let msNum = Number(ms);
  if (subMs < 0n) {
    subMs += NS_PER_MS;
    msNum -= 1;
  }
  // Many records share a millisecond on the hot path: reuse the formatted millisecond prefix.
  if (msNum !== cachedMs) {
    const iso = new Date(msNum).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
    if (iso.length !== 24) throw new RangeError(`timestamp out of range: ${epochNs}`);
    cachedMs = msNum;
    cachedPrefix = iso.slice(0, 23);
  }
  return `${cachedPrefix}${subMs.toString().padStart(6, '0')}Z`;
}

let cachedMs = Number.NaN;
let cachedPrefix = '';

/** Format a Date (millisecond precision) as canonical text. */
export function timestampFromDate(at: Date): string {
  return formatTimestamp(BigInt(at.getTime()) * NS_PER_MS);
}

/** True when `text` is a canonical timestamp naming a real calendar instant (no leap second). */
export function isCanonicalTimestamp(text: string): boolean {
  return parseParts(text) !== null;
}

/** Throw a RangeError unless `text` is a canonical timestamp. */
export function assertTimestamp(text: string): void {
  if (parseParts(text) === null) throw new RangeError(`not a canonical RFC 3339 timestamp: ${JSON.stringify(text)}`);
}

/** Epoch milliseconds (floored) of a canonical timestamp. */
export function timestampToEpochMs(text: string): number {
  const p = mustParse(text);
  return p.ms;
}

/** Epoch nanoseconds of a canonical timestamp. */
export function timestampToEpochNs(text: string): bigint {
  const p = mustParse(text);
  return BigInt(p.ms) * NS_PER_MS + BigInt(p.subMsNs);
}

/** Epoch milliseconds and the sub-millisecond nanoseconds of a canonical timestamp; throws if not canonical. */
export function parseTimestamp(text: string): { ms: number; subMsNs: number } {
  return mustParse(text);
}

function mustParse(text: string): { ms: number; subMsNs: number } {
  const p = parseParts(text);
  if (p === null) throw new RangeError(`not a canonical RFC 3339 timestamp: ${JSON.stringify(text)}`);
  return p;
}

function parseParts(text: string): { ms: number; subMsNs: number } | null {
  if (text.length !== 30) return null;
  const m = CANONICAL.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s, frac] = m as unknown as [string, string, string, string, string, string, string, string];
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // setUTCFullYear (unlike Date.UTC) keeps years 0–99 literal; it rolls 31 Feb into March, so round-trip.
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  if (at.getUTCFullYear() !== year || at.getUTCMonth() !== month - 1 || at.getUTCDate() !== day) return null;
  at.setUTCHours(hour, minute, second, Number(frac.slice(0, 3)));
  return { ms: at.getTime(), subMsNs: Number(frac.slice(3)) };
}
