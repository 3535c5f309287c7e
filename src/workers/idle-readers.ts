/**
 * Per-thread readers kept open between tasks and closed once idle: a finished export must not pin a
 * connection (a Postgres backend, a test's temporary database) for the lifetime of the pool.
 */
export const IDLE_CLOSE_MS = 10_000;

export interface Closable {
  close(): Promise<void>;
}

/** The cache of one kind of reader: `get(key, open)` reuses an open reader and restarts its idle timer. */
export function idleReaders<R extends Closable>(idleMs = IDLE_CLOSE_MS): { get(key: string, open: () => R): R } {
  const open = new Map<string, { reader: R; timer: NodeJS.Timeout | undefined }>();
  return {
    get(key, make) {
      let entry = open.get(key);
      if (entry === undefined) {
        entry = { reader: make(), timer: undefined };
        open.set(key, entry);
      }
      if (entry.timer !== undefined) clearTimeout(entry.timer);
      const current = entry;
      current.timer = setTimeout(() => {
        open.delete(key);
        void current.reader.close().catch(() => undefined);
      }, idleMs);
      // unref: an idle reader never keeps a worker (or the process) alive.
      current.timer.unref();
      return current.reader;
    },
  };
}
