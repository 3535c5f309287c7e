/**
 * Piscina entry of the audit export: read one seq range on this worker's own read-only connection,
 * encode it with the pure encoders and transfer the bytes back (no row is ever structured-cloned).
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { encoderFor } from '../encoders/registry.js';
import type { AuditRecord } from '../ledger/record.js';
import type { EncodePageRequest, EncodePageResult, ExportSource } from './export-protocol.js';
import { openReader, sourceKey, type LedgerReader } from './export-source.js';
import { lowerExportThreadPriority } from './thread-priority.js';
import { idleReaders } from './idle-readers.js';

// Below the main thread's priority (thread-priority.ts).
lowerExportThreadPriority();

const readers = idleReaders<LedgerReader>();
const readerFor = (source: ExportSource): LedgerReader => readers.get(sourceKey(source), () => openReader(source));

/** First output buffer of a worker that was handed none: fits a page of 512 OCSF records. */
const INITIAL_BUFFER = 1024 * 1024;

/** A buffer of at least `need` bytes holding the first `used` bytes of `buf`. */
function grow(buf: Buffer, used: number, need: number): Buffer {
  // allocUnsafeSlow: an ArrayBuffer of its own (never a slice of the shared pool slab), so it can be transferred.
  const next = Buffer.allocUnsafeSlow(Math.max(need, buf.length * 2));
  buf.copy(next, 0, 0, used);
  return next;
}

/** Reads and encodes one page into the request's buffer (or a new one); the buffer is transferred back. */
export async function encodePage(req: EncodePageRequest): Promise<EncodePageResult> {
  const enc = encoderFor('ledger_export', req.format);
  const opts = { device: req.device };
  let buf: Buffer = req.buffer !== undefined ? Buffer.from(req.buffer) : Buffer.allocUnsafeSlow(INITIAL_BUFFER);
  let off = 0;
  let lastSeq: number | null = null;
  const encode = enc.encodeStoredRecord !== undefined ? enc.encodeStoredRecord : (r: AuditRecord) => enc.encodeRecord(r, opts);
  const count = await readerFor(req.source).each(req.tenant, req.fromSeq, req.toSeq, req.filter, (r, text) => {
    const line = encode(r, opts, text);
    // 3 bytes per UTF-16 unit bounds the UTF-8 size; count exactly only when that bound does not fit.
    if (off + line.length * 3 + 1 > buf.length) {
      const need = off + Buffer.byteLength(line) + 1;
      if (need > buf.length) buf = grow(buf, off, need);
    }
    off += buf.write(line, off, 'utf8');
    buf[off++] = 0x0a;
    lastSeq = r.seq;
  });
  return { kind: 'encode-page', bytes: buf.buffer as ArrayBuffer, length: off, count, lastSeq };
}

/** The handler Piscina calls: the result is marked movable so its ArrayBuffer is transferred, not copied. */
export async function handle(req: EncodePageRequest): Promise<EncodePageResult> {
  const result = await encodePage(req);
  const movable = { [transferableSymbol]: result.bytes, [valueSymbol]: result };
  return move(movable as never) as unknown as EncodePageResult;
}
