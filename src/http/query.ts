/** Query-string parsing: `a=1&a=2` becomes `{a: ['1','2']}`; a single value stays a string. */

/** Parse a raw query string (no leading `?`). Malformed percent-escapes are kept verbatim, as URLSearchParams does. */
export function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  if (raw === '') return out;
  for (const [key, value] of new URLSearchParams(raw)) {
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  return { ...out };
}
