/**
 * Opaque cursors of keyset pages (DECISIONS.md "Cursors are opaque"). A cursor names the last id
 * served; the next page is `id > last` in id order. Ids are UUIDv7, so rows inserted while a
 * client pages sort after the rows it already has: nothing present for the whole walk is skipped
 * or served twice (test/modules/accessmap/cursor-property.test.ts).
 */
import { errors } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PREFIX = 'k1.';

/** Encodes the last id of a page as an opaque cursor. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`${PREFIX}${lastId}`, 'utf8').toString('base64url');
}

/** Decodes a cursor back to the last id, or throws 400 `bad_request`. */
export function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.startsWith(PREFIX) ? text.slice(PREFIX.length) : '';
  if (!UUID.test(id) || encodeCursor(id) !== cursor) throw errors.badRequest('invalid cursor');
  return id;
}

/** A page from `limit + 1` fetched rows: the envelope `{items, has_more, cursor?}`. */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): { items: T[]; has_more: boolean; cursor?: string } {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return hasMore && last ? { items, has_more: true, cursor: encodeCursor(last.id) } : { items, has_more: false };
}

const SEQ_PREFIX = 's1.';

/**
 * Encodes the last `seq` of a page as an opaque cursor: pages that seek one node's access edges
 * walk the order edges were stored in (migration 14), a counter that only grows, so an edge stored
 * while a client pages sorts after every edge it has.
 */
export function encodeSeqCursor(lastSeq: number | string): string {
  return Buffer.from(`${SEQ_PREFIX}${Number(lastSeq)}`, 'utf8').toString('base64url');
}

/** Decodes a `seq` cursor back to the last seq, or throws 400 `bad_request` (an id cursor of another page included). */
export function decodeSeqCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const digits = text.startsWith(SEQ_PREFIX) ? text.slice(SEQ_PREFIX.length) : '';
  const seq = /^(0|[1-9][0-9]{0,15})$/.test(digits) ? Number(digits) : NaN;
  if (!Number.isSafeInteger(seq) || encodeSeqCursor(seq) !== cursor) throw errors.badRequest('invalid cursor');
  return seq;
}
