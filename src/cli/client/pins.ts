import { createHash } from 'node:crypto';

/**
 * Parses one `--pin-sha256` value into the 32 raw digest bytes.
 *
 * Accepted spellings of the SHA-256 of the leaf's SubjectPublicKeyInfo (DER):
 * - base64 (the `pin_sha256` that `svc serve` logs, and RFC 7469's pin-sha256 form), with or
 *   without padding, optionally prefixed `sha256//` as curl's `--pinnedpubkey` writes it;
 * - hex, 64 digits, optionally colon-separated pairs as `openssl x509 -fingerprint` prints them.
 * Anything that does not decode to exactly 32 bytes is rejected (`undefined`). The two forms cannot
 * collide: 64 hex digits read as base64 would give 48 bytes.
 */
export function parsePin(text: string): Buffer | undefined {
  let input = text.trim();
  if (input.toLowerCase().startsWith('sha256//')) input = input.slice('sha256//'.length);
  const hex = input.replaceAll(':', '');
  if (/^[0-9a-fA-F]{64}$/.test(hex) && (input === hex || /^([0-9a-fA-F]{2}:){31}[0-9a-fA-F]{2}$/.test(input))) {
    return Buffer.from(hex, 'hex');
  }
  if (/^[A-Za-z0-9+/]{43}=?$/.test(input)) {
    const bytes = Buffer.from(input, 'base64');
    // Re-encode to refuse non-canonical trailing bits instead of silently accepting a near-miss.
    if (bytes.length === 32 && bytes.toString('base64').replace(/=$/, '') === input.replace(/=$/, '')) {
      return bytes;
    }
  }
  return undefined;
}

/** SHA-256 of a DER SubjectPublicKeyInfo, the value a pin is compared with. */
export function spkiSha256(spkiDer: Uint8Array): Buffer {
  return createHash('sha256').update(spkiDer).digest();
}
