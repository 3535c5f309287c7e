/**
 * A streamed `.tar.gz` of small in-memory files: POSIX ustar headers (names under 100 bytes),
 * gzip from node:zlib. The support bundle's files are a few kilobytes each, so a library that
 * streams file bodies of unknown size would add nothing here.
 */
import { createGzip } from 'node:zlib';
import type { Readable } from 'node:stream';

export interface TarFile {
  name: string;
  body: Buffer | string;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/** One 512-byte ustar header. */
export function tarHeader(name: string, size: number, mtime: number): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length > 99) throw new Error(`tar entry name too long: ${name}`);
  const h = Buffer.alloc(512, 0);
  nameBytes.copy(h, 0);
  h.write(octal(0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.floor(mtime / 1000), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write('svc', 265, 'ascii');
  h.write('svc', 297, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

/**
 * Gzip stream of a tar archive whose files come from `files` one at a time (each produced only when
 * the previous one is written), so a slow section never holds the others in memory.
 */
export function tarGzStream(files: AsyncIterable<TarFile>, onError: (err: unknown) => void): Readable {
  const gz = createGzip();
  const write = (chunk: Buffer) => (gz.write(chunk) ? Promise.resolve() : new Promise<void>((r) => gz.once('drain', () => r())));
  void (async () => {
    try {
      const mtime = Date.now();
      for await (const f of files) {
        const body = typeof f.body === 'string' ? Buffer.from(f.body, 'utf8') : f.body;
        await write(tarHeader(f.name, body.length, mtime));
        await write(body);
        const pad = (512 - (body.length % 512)) % 512;
        if (pad > 0) await write(Buffer.alloc(pad, 0));
      }
      await write(Buffer.alloc(1024, 0));
      gz.end();
    } catch (err) {
      onError(err);
      gz.destroy(err as Error);
    }
  })();
  return gz;
}
