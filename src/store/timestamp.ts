/** Canonical timestamp text as stored: RFC 3339 UTC with exactly 9 fractional digits (DECISIONS.md). */
export function storeTimestamp(at: Date = new Date()): string {
  // Date has millisecond precision; the six extra digits are zeros, which keeps text order = time order.
  return at.toISOString().replace(/Z$/, '000000Z');
}
