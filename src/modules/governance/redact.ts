/**
 * What of an agent tool's input goes into the ledger: a bounded summary with secrets removed, never
 * the input verbatim. Values under secret-looking keys become `[redacted]`; credential shapes inside
 * any string (svc tokens, bearer headers, private keys, cloud and SaaS keys, `password=…`) are
 * replaced; strings are cut at 256 characters, arrays at 20 items, objects at 50 keys, depth 4.
 */
const SECRET_KEY =
  /(pass(word|wd|phrase)?|secret|token|api[_-]?key|auth(orization)?|credential|private[_-]?key|cookie|session[_-]?key|access[_-]?key)/i;
const SECRET_TEXT: RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\bsvc(st|s|k)_[A-Za-z0-9]+/g,
  /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\b(ghp|gho|ghs|ghu|github_pat)_[A-Za-z0-9_]{20,}/g,
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b(password|passwd|secret|token|api[_-]?key)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)/gi,
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:[^\s@/]+@/gi,
];
const MAX_STRING = 256;

function redactText(s: string): string {
  let out = s;
  for (const re of SECRET_TEXT)
    out = out.replace(re, (m, ...g) => (re.source.startsWith('\\b(password') ? `${String(g[0])}${String(g[1])}[redacted]` : '[redacted]'));
  return out.length > MAX_STRING ? `${out.slice(0, MAX_STRING)}…(${out.length} chars)` : out;
}

/** The ledger's summary of a tool input. */
export function summariseInput(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (depth >= 4) return '[nested]';
  if (Array.isArray(value)) {
    const items = value.slice(0, 20).map((v) => summariseInput(v, depth + 1));
    return value.length > 20 ? [...items, `…(${value.length} items)`] : items;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const entries = Object.entries(value as Record<string, unknown>);
    for (const [k, v] of entries.slice(0, 50)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : summariseInput(v, depth + 1);
    if (entries.length > 50) out['…'] = `${entries.length} keys`;
    return out;
  }
  return String(value);
}
