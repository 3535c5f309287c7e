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
import { idleReaders } from '../../workers/idle-readers.js';
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

type Reader = FindingsReader & { close(): Promise<void> };
const readers = idleReaders<Reader>();

function open(source: ExportSource): Reader {
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

const readerFor = (source: ExportSource): FindingsReader => readers.get(`sarif:${sourceKey(source)}`, () => open(source));

/** Runs one task; a page's bytes are transferred, not copied. */
export async function runSarifTask(task: SarifTask): Promise<CountResult | PageResult> {
  const reader = readerFor(task.source);
  if (task.kind === 'sarif-count') return countFindings(reader, task);
  const page = await encodeFindingsPage(reader, task);
  return move({ [transferableSymbol]: page.bytes, [valueSymbol]: page } as never) as unknown as PageResult;
}
