/**
 * The SARIF export's work on an export thread (sarif-worker.ts loads it): the count pass or one
 * page, read on this thread's own read-only connection and encoded here, the page's bytes
 * transferred back (no row is ever structured-cloned, the main thread only writes).
 * SQLite: a `readonly` better-sqlite3 handle on `svc.db` (WAL: readers never block the writer).
 * Postgres: a one-connection store whose `withTenant` sets the role and tenant as the server does,
 * so RLS confines every read.
 */
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import type { Database } from '../../store/schema.js';
import { openStore, type Store } from '../../store/store.js';
import type { ExportSource } from '../../workers/export-protocol.js';
import { sourceKey } from '../../workers/export-source.js';
import {
  countFindings,
  encodeFindingsPage,
  type CountRequest,
  type CountResult,
  type FindingsReader,
  type PageRequest,
  type PageResult,
} from './sarif-pages.js';

export type SarifTask =
  ({ kind: 'sarif-count' } & CountRequest & { source: ExportSource }) | ({ kind: 'sarif-page' } & PageRequest & { source: ExportSource });

/** A finished export must not pin a connection (a Postgres backend, a test's database) for the pool's lifetime. */
const IDLE_CLOSE_MS = 10_000;

interface Cached {
  reader: FindingsReader & { close(): Promise<void> };
  timer: NodeJS.Timeout | undefined;
}
const readers = new Map<string, Cached>();

function open(source: ExportSource): Cached['reader'] {
  if (source.kind === 'sqlite') {
    const handle = new BetterSqlite3(source.file, { readonly: true, fileMustExist: true, timeout: 5000 });
    handle.pragma('cache_size = -2048');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle }) });
    return { read: (_tenant, fn) => fn(db), close: () => db.destroy() };
  }
  let opened: Promise<Store> | undefined;
  const store = () =>
    (opened ??= openStore({
      backend: 'postgres',
      dataDir: '',
      dsn: source.dsn,
      poolSize: 1,
      ...(source.appRole !== undefined ? { pgAppRole: source.appRole } : {}),
    }));
  return {
    read: async (tenant, fn) => (await store()).withTenant(tenant, fn),
    close: async () => {
      if (opened) await (await opened).close();
    },
  };
}

function readerFor(source: ExportSource): FindingsReader {
  const key = `sarif:${sourceKey(source)}`;
  let entry = readers.get(key);
  if (entry === undefined) {
    entry = { reader: open(source), timer: undefined };
    readers.set(key, entry);
  }
  if (entry.timer !== undefined) clearTimeout(entry.timer);
  const current = entry;
  current.timer = setTimeout(() => {
    readers.delete(key);
    void current.reader.close().catch(() => undefined);
  }, IDLE_CLOSE_MS);
  current.timer.unref();
  return current.reader;
}

/** Runs one task; a page's bytes are transferred, not copied. */
export async function runSarifTask(task: SarifTask): Promise<CountResult | PageResult> {
  const reader = readerFor(task.source);
  if (task.kind === 'sarif-count') return countFindings(reader, task);
  const page = await encodeFindingsPage(reader, task);
  return move({ [transferableSymbol]: page.bytes, [valueSymbol]: page } as never) as unknown as PageResult;
}
