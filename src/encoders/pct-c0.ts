/**
 * `pct-c0-v1`: the control-byte layer beneath each dialect's escaping (DECISIONS.md "Encoders").
 *
 * `%` → `%25`; the bytes 0x00–0x1F and 0x7F → `%XX`; each byte that is not part of a well-formed
 * UTF-8 sequence (Unicode 15 §3.9 Table 3-7) → `%XX`; hex digits uppercase. Everything else passes
 * through unchanged, so the output is valid UTF-8 without a single control character and a receiver
 * recovers the exact bytes with `pctC0DecodeBytes`.
 *
 * JS strings: a lone UTF-16 surrogate has no UTF-8 form. It is replaced by U+FFFD, exactly as
 * `Buffer.from(s, 'utf8')` / `TextEncoder` (and therefore the ledger's hash preimage and both stores)
 * turn it into bytes, so the recovered bytes are the bytes that were hashed and stored. Invalid UTF-8
 * can only arrive as bytes (`Uint8Array`), where it is preserved byte-exactly.
 */

/** The value of `wire_enc` / `olvWireEnc` on every ledger line. */
export const WIRE_ENC = 'pct-c0-v1';

/** Thrown when a text is not a valid `pct-c0-v1` encoding. */
export class PctC0DecodeError extends Error {
  override readonly name = 'PctC0DecodeError';
  /** UTF-16 index of the offending character */
  readonly index: number;
  constructor(message: string, index: number) {
    super(`pct-c0-v1: ${message} at index ${index}`);
    this.index = index;
  }
}

const HEX = '0123456789ABCDEF';
const pct = (b: number): string => '%' + HEX[b >> 4] + HEX[b & 15];

// Anything the string encoder must touch: `%`, C0 controls, DEL, and any surrogate (checked for pairing).
const NEEDS_WORK = /[\x00-\x1F\x7F%\uD800-\uDFFF]/;

/** Encodes a string or raw bytes with the `pct-c0-v1` layer (see the module comment). */
export function pctC0Encode(value: string | Uint8Array): string {
  return typeof value === 'string' ? encodeString(value) : encodeBytes(value);
}

function encodeString(s: string): string {
  if (!NEEDS_WORK.test(s)) return s;
  let out = '';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string | null = null;
    if (c === 0x25) rep = '%25';
    else if (c < 0x20 || c === 0x7f) rep = pct(c);
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) i++; // a well-formed pair passes through
      else rep = '\uFFFD';
    } else if (c >= 0xdc00 && c <= 0xdfff) rep = '\uFFFD';
    if (rep !== null) {
      out += s.slice(start, i) + rep;
      start = i + 1;
    }
  }
  return out + s.slice(start);
}

/** Length of the well-formed UTF-8 sequence starting at `i`, or 0 when byte `i` starts none. */
function utf8SequenceLength(b: Uint8Array, i: number): number {
  const b0 = b[i] ?? 0;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => {
    const v = b[i + k];
    return v !== undefined && v >= lo && v <= hi;
  };
  // Unicode §3.9 Table 3-7 "Well-Formed UTF-8 Byte Sequences": rejects overlongs, surrogates, > U+10FFFF.
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((b0 >= 0xe1 && b0 <= 0xec) || b0 === 0xee || b0 === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b0 === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (b0 === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xf1 && b0 <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

function encodeBytes(b: Uint8Array): string {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let out = '';
  let runStart = 0; // start of a run of bytes that pass through unchanged
  let i = 0;
  while (i < buf.length) {
    const c = buf[i] ?? 0;
    if (c < 0x80) {
      if (c === 0x25 || c < 0x20 || c === 0x7f) {
        out += buf.toString('utf8', runStart, i) + pct(c);
        runStart = i + 1;
      }
      i++;
      continue;
    }
    const n = utf8SequenceLength(buf, i);
    if (n > 0) {
      i += n;
    } else {
      out += buf.toString('utf8', runStart, i) + pct(c);
      i++;
      runStart = i;
    }
  }
  return out + buf.toString('utf8', runStart, buf.length);
}

const hexVal = (c: number): number => {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
};

/** Decodes a `pct-c0-v1` text back to the exact original bytes; throws `PctC0DecodeError` on malformed input. */
export function pctC0DecodeBytes(text: string): Buffer {
  const parts: Buffer[] = [];
  let runStart = 0;
  const flush = (end: number): void => {
    if (end > runStart) parts.push(Buffer.from(text.slice(runStart, end), 'utf8'));
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25) {
      const hi = hexVal(text.charCodeAt(i + 1));
      const lo = hexVal(text.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) throw new PctC0DecodeError('"%" not followed by two hex digits', i);
      flush(i);
      parts.push(Buffer.of(hi * 16 + lo));
      i += 2;
      runStart = i + 1;
    } else if (c < 0x20 || c === 0x7f) {
      throw new PctC0DecodeError(`raw control character 0x${c.toString(16).padStart(2, '0')}`, i);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) throw new PctC0DecodeError('lone surrogate', i);
      i++;
    }
  }
  flush(text.length);
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes a `pct-c0-v1` text to a string; throws when the original bytes were not valid UTF-8 (use `pctC0DecodeBytes`). */
export function pctC0Decode(text: string): string {
  if (!text.includes('%')) {
    pctC0DecodeBytes(text); // validates: no raw controls, no lone surrogates
    return text;
  }
  const bytes = pctC0DecodeBytes(text);
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new PctC0DecodeError('original bytes are not valid UTF-8; use pctC0DecodeBytes', 0);
  }
}
