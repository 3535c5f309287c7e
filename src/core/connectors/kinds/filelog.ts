/**
 * `filelog`: one line per record appended to a file (mode 0600), rotated by size with a kept count.
 * fsync policy (`fsync`): `batch` (default) calls fsync after every batch before the batch counts as
 * delivered, so a delivered record survives a power cut; `never` leaves flushing to the OS (faster; a
 * crash of the machine can lose the last seconds, a crash of svc cannot: the write already returned).
 * Rotation happens between batches, never inside one: when the file holds at least `max_bytes`,
 * `<path>` becomes `<path>.1`, `.1` becomes `.2`… and files beyond `keep` are deleted.
 */
import { chmod, mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import Type, { type Static } from 'typebox';
import { Text } from '../../../contract/common.js';
import type { ConnectorKind, ConnectorSink, KindContext, SinkItem, SinkResult } from './types.js';

export const FilelogConfig = Type.Object(
  {
    path: Text({ minLength: 1, maxLength: 4096, description: 'file to append to; relative: to the data directory' }),
    max_bytes: Type.Optional(
      Type.Integer({ minimum: 4096, maximum: 1024 ** 4, description: 'rotate once the file holds this many bytes (default 100 MiB)' }),
    ),
    keep: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, description: 'rotated files kept (default 5; 0: the full file is deleted on rotation)' }),
    ),
    fsync: Type.Optional(
      Type.Union([Type.Literal('batch'), Type.Literal('never')], {
        description: 'batch (default): fsync before a batch counts as delivered',
      }),
    ),
  },
  { additionalProperties: false },
);
export type FilelogConfig = Static<typeof FilelogConfig>;

const DEFAULT_MAX = 100 * 1024 * 1024;

class FilelogSink implements ConnectorSink {
  readonly #path: string;
  readonly #max: number;
  readonly #keep: number;
  readonly #fsync: boolean;
  #fh: FileHandle | undefined;
  #size = 0;

  constructor(c: FilelogConfig, ctx: KindContext) {
    this.#path = isAbsolute(c.path) ? c.path : resolve(join(ctx.dataDir, c.path));
    this.#max = c.max_bytes ?? DEFAULT_MAX;
    this.#keep = c.keep ?? 5;
    this.#fsync = (c.fsync ?? 'batch') === 'batch';
  }

  async #open(): Promise<FileHandle> {
    if (this.#fh) return this.#fh;
    await mkdir(dirname(this.#path), { recursive: true, mode: 0o700 });
    const fh = await open(this.#path, 'a', 0o600);
    // An existing file keeps its inode but never stays readable by others.
    await chmod(this.#path, 0o600);
    this.#size = (await fh.stat()).size;
    this.#fh = fh;
    return fh;
  }

  async #rotate(): Promise<void> {
    await this.#fh?.close();
    this.#fh = undefined;
    if (this.#keep === 0) await rm(this.#path, { force: true });
    else {
      await rm(`${this.#path}.${this.#keep}`, { force: true });
      for (let i = this.#keep - 1; i >= 1; i--) {
        const from = `${this.#path}.${i}`;
        if (await stat(from).then(() => true, () => false)) await rename(from, `${this.#path}.${i + 1}`);
      }
      await rename(this.#path, `${this.#path}.1`);
    }
  }

  async send(items: readonly SinkItem[]): Promise<SinkResult> {
    try {
      let fh = await this.#open();
      if (this.#size >= this.#max) {
        await this.#rotate();
        fh = await this.#open();
      }
      const buf = Buffer.from(items.map((i) => i.line + '\n').join(''), 'utf8');
      let off = 0;
      while (off < buf.length) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
      this.#size += buf.length;
      if (this.#fsync) await fh.sync();
      return { result: 'delivered' };
    } catch (err) {
      // The file handle may be in any state after a failed write: reopen next time (appends again; at-least-once).
      await this.#fh?.close().catch(() => undefined);
      this.#fh = undefined;
      return { result: 'retry', error: `filelog ${this.#path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
    }
  }

  async close(): Promise<void> {
    await this.#fh?.close();
    this.#fh = undefined;
  }
}

export const filelogKind: ConnectorKind<FilelogConfig> = {
  kind: 'filelog',
  format: { surface: 'notification' },
  configSchema: FilelogConfig,
  secretFields: [],
  maxBatch: 5000,
  open: async (config, ctx) => new FilelogSink(config, ctx),
};
