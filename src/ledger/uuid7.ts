/** UUIDv7 (RFC 9562 §5.7), lowercase, as DECISIONS.md requires for every id. */
import { randomFillSync } from 'node:crypto';

const POOL_SIZE = 8 * 1024;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOff = POOL_SIZE;
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A UUIDv7 for instant `epochMs` + `subMsNs` nanoseconds. The 12-bit rand_a field carries the
 * sub-millisecond fraction (RFC 9562 §6.2 method 3), so ids minted from strictly increasing ledger
 * timestamps sort in time order; the remaining 62 bits are random.
 */
export function uuid7(epochMs: number = Date.now(), subMsNs = 0): string {
  if (poolOff + 8 > POOL_SIZE) {
    randomFillSync(pool);
    poolOff = 0;
  }
  const r = poolOff;
  poolOff += 8;
  const fracBits = Math.floor((subMsNs * 4096) / 1_000_000) & 0xfff;
  const hi = Math.floor(epochMs / 0x1_0000); // upper 32 of the 48-bit ms
  const lo = epochMs & 0xffff;
  const h = (n: number): string => HEX[n & 0xff] as string;
  return (
    h(hi >>> 24) + h(hi >>> 16) + h(hi >>> 8) + h(hi) + '-' +
    h(lo >>> 8) + h(lo) + '-' +
    h(0x70 | (fracBits >>> 8)) + h(fracBits) + '-' +
    h(0x80 | ((pool[r] as number) & 0x3f)) + h(pool[r + 1] as number) + '-' +
    h(pool[r + 2] as number) + h(pool[r + 3] as number) + h(pool[r + 4] as number) +
    h(pool[r + 5] as number) + h(pool[r + 6] as number) + h(pool[r + 7] as number)
  );
}

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** True for a lowercase UUIDv7 with the RFC 9562 variant bits. */
export function isUuid7(text: string): boolean {
  return UUID7.test(text);
}

/** The 48-bit Unix millisecond timestamp of a UUIDv7. */
export function uuid7EpochMs(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
