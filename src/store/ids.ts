/**
 * Record ids that sort in creation order within this process: UUIDv7 whose 12-bit sub-millisecond
 * field (RFC 9562 §6.2 method 3) is bumped when two ids fall into the same slot, so lists ordered
 * by id are in creation order and keyset cursors follow it.
 */
import { uuid7 } from '../ledger/uuid7.js';

let lastMs = 0;
let lastFrac = -1;

/** A new lowercase UUIDv7, greater than every id minted before it by this process. */
export function newId(now: number = Date.now(), subMsNs = Number(process.hrtime.bigint() % 1_000_000n)): string {
  let ms = Math.max(now, lastMs);
  let frac = ms === now ? Math.floor((subMsNs * 4096) / 1_000_000) : 0;
  if (ms === lastMs && frac <= lastFrac) frac = lastFrac + 1;
  if (frac > 0xfff) {
    ms += 1;
    frac = 0;
  }
  lastMs = ms;
  lastFrac = frac;
  return uuid7(ms, Math.ceil((frac * 1_000_000) / 4096));
}
