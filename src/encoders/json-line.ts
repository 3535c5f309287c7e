/**
 * NDJSON framing shared by the JSON-family encoders (otlp, otlp_log_record, ocsf, json, asim, ecs,
 * udm): one JSON object per line, pure ASCII-safe line breaking, well-formed UTF-8.
 */

// JSON.stringify escapes U+0000–U+001F (so no raw CR/LF, RFC 8259 §7) and, since ES2019
// ("well-formed JSON.stringify"), writes a lone surrogate as a `\udXXX` escape. Two gaps remain:
//  1. Strict parsers (Rust serde_json, used by Vector; Go's encoding/json replaces) reject or alter
//     `\udXXX` escapes that do not form a pair. The ledger stores text as UTF-8, where a lone
//     surrogate is already U+FFFD (WHATWG encode), so emitting U+FFFD keeps what was hashed.
//  2. U+0085 (NEL), U+2028 and U+2029 are line terminators for some splitters (Python
//     `str.splitlines`, older JavaScript `eval`); DEL is a C0-adjacent control. We escape them so a
//     line can only end at our `\n`.
// Both run on the serialised text: structural JSON is ASCII, so these code points and escapes can
// only occur inside strings. `\\\\` is matched first so an escaped backslash followed by the text
// `ud800` is left alone.
const FIXUPS = /\\\\|\\ud[89a-f][0-9a-f]{2}|[\u007f\u0085\u2028\u2029]/g;

function fixup(match: string): string {
  if (match === '\\\\') return match;
  if (match.length === 6) return '\\ufffd';
  return `\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Serialise one value as a single NDJSON line (no trailing newline), safe for any line splitter. */
export function toJsonLine(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('value is not JSON-serialisable');
  return text.replace(FIXUPS, fixup);
}
