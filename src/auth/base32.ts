/** RFC 4648 §6 base32 (upper-case alphabet, no padding), the text form of every opaque token. */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Encode bytes as unpadded RFC 4648 base32. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** Length of the unpadded base32 text of `n` bytes. */
export function base32Length(n: number): number {
  return Math.ceil((n * 8) / 5);
}

/** True when `text` uses only the RFC 4648 base32 alphabet. */
export function isBase32(text: string): boolean {
  return /^[A-Z2-7]*$/.test(text);
}
