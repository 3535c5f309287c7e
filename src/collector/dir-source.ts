/**
 * A directory of JSON files as a source: each `*.json` file holds one object or an array of
 * objects (items, see items.ts). A file is taken once it has been stable for `settleMs` (same size
 * and mtime on two looks), so a file being written is not read half; writers that rename into the
 * directory are never seen half. Files are identified by name + inode + size + mtime; the cursor
 * lists the ones done (only those still present, so it stays as small as the directory) and the
 * position inside a file split across batches.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface DirCursor {
  done: string[];
  /** a file split across batches: its key and how many of its records are spooled */
  partial?: { key: string; next: number };
}

export interface DirRead {
  records: unknown[];
  /** files that were not valid JSON, with the reason */
  invalid: Array<{ file: string; reason: string }>;
  cursor: DirCursor;
}

/** Reads new files of one directory. */
export class DirSource {
  private readonly done: Set<string>;
  private partial: { key: string; next: number } | undefined;
  private readonly seen = new Map<string, string>();

  constructor(readonly dir: string, cursor?: DirCursor, private readonly settleMs = 0) {
    this.done = new Set(cursor?.done ?? []);
    this.partial = cursor?.partial;
  }

  /** Up to `max` records from files not yet done, oldest name first. */
  read(max: number): DirRead {
    const out: DirRead = { records: [], invalid: [], cursor: this.cursor() };
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json')).sort();
    } catch {
      return out;
    }
    const files: Array<{ name: string; file: string; key: string }> = [];
    for (const name of names) {
      const file = path.join(this.dir, name);
      try {
        const st = statSync(file);
        if (st.isFile()) files.push({ name, file, key: `${name}:${st.ino}:${st.size}:${Math.trunc(st.mtimeMs)}` });
      } catch {
        // raced with a delete
      }
    }
    // Forget files that are gone (or changed), so the cursor stays as small as the directory.
    const present = new Set(files.map((f) => f.key));
    for (const k of this.done) if (!present.has(k)) this.done.delete(k);
    for (const { name, file, key } of files) {
      if (out.records.length >= max) break;
      if (this.done.has(key)) continue;
      if (this.settleMs > 0 && this.seen.get(name) !== key) {
        // First look (or it changed since): wait one more round before trusting it is complete.
        this.seen.set(name, key);
        continue;
      }
      let records: unknown[];
      try {
        const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
        records = Array.isArray(parsed) ? parsed : [parsed];
      } catch (err) {
        out.invalid.push({ file, reason: (err as Error).message });
        this.done.add(key);
        continue;
      }
      const from = this.partial?.key === key ? this.partial.next : 0;
      const room = max - out.records.length;
      const take = records.slice(from, from + room);
      out.records.push(...take);
      if (from + take.length < records.length) {
        this.partial = { key, next: from + take.length };
        break;
      }
      this.partial = undefined;
      this.done.add(key);
    }
    out.cursor = this.cursor();
    return out;
  }

  private cursor(): DirCursor {
    return { done: [...this.done].sort(), ...(this.partial ? { partial: { ...this.partial } } : {}) };
  }
}
