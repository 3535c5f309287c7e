/**
 * A JSON-lines file source that follows the file like `tail -F`: it remembers (inode, offset),
 * survives rotation by rename + recreate (it finishes the renamed file, found by its inode, then
 * starts the new one at 0) and truncation (size below the offset: start again at 0). Only complete
 * lines are consumed, so a line being written is never read half.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';

/** Where the tailer stands: the file it reads (by inode) and the offset after the last consumed line. */
export interface TailCursor {
  ino: number;
  offset: number;
}

/** One read: complete lines and the cursor after them. */
export interface TailRead {
  lines: string[];
  cursor: TailCursor;
}

const CHUNK = 1024 * 1024;

/** Follows one path. Call `read()` on a timer; it never blocks on an empty file. */
export class JsonlTailer {
  private fd: number | undefined;
  private ino = 0;
  private offset = 0;
  /** a rotated-away file still to finish: read to its end before the new one */
  private draining = false;

  constructor(readonly file: string, cursor?: TailCursor) {
    if (cursor) {
      this.ino = cursor.ino;
      this.offset = cursor.offset;
    }
  }

  /** Up to `maxLines` new complete lines, stopping early past `maxBytes` (possibly none). */
  read(maxLines: number, maxBytes = Number.MAX_SAFE_INTEGER): TailRead {
    if (this.fd === undefined) this.openFile();
    const lines: string[] = [];
    let bytes = 0;
    while (this.fd !== undefined && lines.length < maxLines && bytes < maxBytes) {
      const st = fstatSync(this.fd);
      if (st.size < this.offset) this.offset = 0; // truncated in place (copytruncate)
      const before = this.offset;
      const got = this.readLines(maxLines - lines.length, maxBytes - bytes);
      bytes += this.offset - before;
      lines.push(...got);
      if (got.length > 0) continue;
      // Nothing more in this file: switch if the path now names another file (rotation).
      if (!this.rotated()) break;
      closeSync(this.fd);
      this.fd = undefined;
      this.draining = false;
      this.ino = 0;
      this.offset = 0;
      this.openFile();
    }
    return { lines, cursor: { ino: this.ino, offset: this.offset } };
  }

  private readLines(max: number, maxBytes: number): string[] {
    const out: string[] = [];
    const buf = Buffer.alloc(CHUNK);
    let bytes = 0;
    while (out.length < max && bytes < maxBytes) {
      const n = readSync(this.fd as number, buf, 0, CHUNK, this.offset);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      let start = 0;
      let nl: number;
      while (out.length < max && start < maxBytes - bytes && (nl = chunk.indexOf(0x0a, start)) >= 0) {
        out.push(chunk.subarray(start, nl).toString('utf8'));
        start = nl + 1;
      }
      if (start === 0) {
        // A line longer than a chunk: skip it whole rather than stall (it would be refused anyway).
        if (n === CHUNK) {
          this.offset += n;
          continue;
        }
        break;
      }
      this.offset += start;
      bytes += start;
    }
    return out;
  }

  /** True when the path names another inode (or nothing) than the one being read. */
  private rotated(): boolean {
    if (this.draining) return true;
    try {
      return statSync(this.file).ino !== this.ino;
    } catch {
      return false; // gone and not yet recreated: keep the old one open until it is
    }
  }

  private openFile(): void {
    let st;
    try {
      st = statSync(this.file);
    } catch {
      return; // not there yet
    }
    if (this.ino !== 0 && st.ino !== this.ino) {
      // Rotated while we were not looking: finish the renamed file first if it is beside the path.
      const old = this.findByInode(this.ino);
      if (old) {
        this.fd = openSync(old, 'r');
        this.draining = true;
        if (fstatSync(this.fd).size < this.offset) this.offset = 0;
        return;
      }
      this.offset = 0;
    }
    this.fd = openSync(this.file, 'r');
    this.ino = fstatSync(this.fd).ino;
    if (fstatSync(this.fd).size < this.offset) this.offset = 0;
  }

  private findByInode(ino: number): string | undefined {
    const dir = path.dirname(this.file);
    const base = path.basename(this.file);
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(base) || name === base) continue;
      try {
        if (statSync(path.join(dir, name)).ino === ino) return path.join(dir, name);
      } catch {
        // raced with a delete
      }
    }
    return undefined;
  }

  /** Release the file. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
