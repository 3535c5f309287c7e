const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a client duration into milliseconds: `500ms`, `10s`, `2m`, `1h`, compounds such as
 * `1m30s` (Go's time.ParseDuration style, which operators already type), or a bare number of
 * seconds (`5`, the form the spec uses for `agent managed-settings --timeout`).
 * Returns `undefined` for anything else, zero or negative included.
 */
export function parseDuration(text: string): number | undefined {
  const input = text.trim();
  if (/^\d+(\.\d+)?$/.test(input)) {
    const ms = Number(input) * 1000;
    return ms > 0 ? Math.round(ms) : undefined;
  }
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < input.length) {
    part.lastIndex = pos;
    const match = part.exec(input);
    if (match === null) return undefined;
    const [whole, amount, unit] = match;
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
    pos += whole.length;
  }
  if (pos === 0 || !Number.isFinite(total) || total <= 0) return undefined;
  return Math.round(total);
}
