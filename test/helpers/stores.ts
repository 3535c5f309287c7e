/** The store backends enabled for this test run, each with a factory for a fresh, isolated store. */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openStore, type Store, type StoreBackend, type StoreConfig } from '../../src/store/store.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite/sqlite-store.js';
import { storage } from '../../src/storage.js';
import { createTempDatabase, pgQuery, pgTestDsn } from './pg.js';

/** Raw SQL as the database owner, outside the Store (to set up states the Store must refuse). */
export interface AdminSql {
  query<R extends object = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
}

/** A store on its own temporary directory or database. */
export interface TestStore {
  backend: StoreBackend;
  store: Store;
  config: StoreConfig;
  admin: AdminSql;
  /** opens another Store on the same data (the caller may close it; `dispose` does too) */
  reopen(overrides?: Partial<StoreConfig>): Promise<Store>;
  /** closes every store opened here and deletes the data */
  dispose(): Promise<void>;
}

/** One backend of the matrix: `skip` is the reason it does not run here, or undefined. */
export interface TestStoreBackend {
  backend: StoreBackend;
  skip: string | undefined;
  create(overrides?: Partial<StoreConfig>): Promise<TestStore>;
}

const ALL: readonly StoreBackend[] = ['sqlite', 'postgres'];

/** Backends named by `SVC_TEST_STORES` (comma list), or all. */
export function selectedBackends(env: NodeJS.ProcessEnv = process.env): Set<StoreBackend> {
  const raw = env['SVC_TEST_STORES']?.trim();
  if (!raw) return new Set(ALL);
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!ALL.includes(n as StoreBackend)) throw new Error(`SVC_TEST_STORES: unknown backend ${JSON.stringify(n)} (${ALL.join(', ')})`);
  }
  return new Set(names as StoreBackend[]);
}

function sqliteAdmin(dataDir: string): AdminSql {
  return {
    async query<R extends object>(text: string, params: unknown[] = []): Promise<R[]> {
      // A second connection to the same file, like another process would have.
      const db = new BetterSqlite3(join(dataDir, SQLITE_FILE_NAME), { timeout: 5000 });
      try {
        // With the areas' files attached, as the store has them: queries name their tables unqualified (the edge file's access_edges).
        for (const f of storage.sqliteFiles())
          if (existsSync(join(dataDir, f.file))) db.prepare(`attach database ? as ${f.schema}`).run(join(dataDir, f.file));
        const stmt = db.prepare(text);
        if (stmt.reader) return stmt.all(...params) as R[];
        stmt.run(...params);
        return [];
      } finally {
        db.close();
      }
    },
  };
}

async function track(config: StoreConfig, admin: AdminSql, cleanup: () => Promise<void>): Promise<TestStore> {
  const opened: Store[] = [];
  const open = async (overrides: Partial<StoreConfig> = {}): Promise<Store> => {
    const store = await openStore({ ...config, ...overrides });
    opened.push(store);
    return store;
  };
  const store = await open();
  return {
    backend: config.backend,
    store,
    config,
    admin,
    reopen: open,
    async dispose() {
      await Promise.allSettled(opened.map((s) => s.close()));
      await cleanup();
    },
  };
}

/** A fresh SQLite store in a new temporary directory. */
export async function createSqliteTestStore(overrides: Partial<StoreConfig> = {}): Promise<TestStore> {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-store-'));
  const config: StoreConfig = { backend: 'sqlite', dataDir, ...overrides };
  return track(config, sqliteAdmin(dataDir), () => rm(dataDir, { recursive: true, force: true }));
}

/** A fresh Postgres store on a new `svc_test_<random>` database of the admin DSN's server. */
export async function createPostgresTestStore(adminDsn: string, overrides: Partial<StoreConfig> = {}): Promise<TestStore> {
  const temp = await createTempDatabase(adminDsn);
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-store-'));
  const config: StoreConfig = { backend: 'postgres', dataDir, dsn: temp.dsn, poolSize: 4, ...overrides };
  const admin: AdminSql = { query: (text, params) => pgQuery(temp.dsn, text, params) };
  return track(config, admin, async () => {
    await temp.drop();
    await rm(dataDir, { recursive: true, force: true });
  });
}

/**
 * Every backend with its skip reason (narrowed by `SVC_TEST_STORES`; Postgres per `pgTestDsn`).
 * Loop over it and pass `{ skip: b.skip }` to `describe`, naming the suite `${b.backend}: …`.
 */
export async function testStores(): Promise<TestStoreBackend[]> {
  const selected = selectedBackends();
  const excluded = (b: StoreBackend): string | undefined =>
    selected.has(b) ? undefined : `SVC_TEST_STORES=${process.env['SVC_TEST_STORES'] ?? ''} excludes ${b}`;
  const pg = selected.has('postgres') ? await pgTestDsn() : undefined;
  const refuse = (reason: string) => async (): Promise<TestStore> => {
    throw new Error(`store backend skipped: ${reason}`);
  };
  const sqliteSkip = excluded('sqlite');
  const pgSkip = excluded('postgres') ?? pg?.skip;
  return [
    { backend: 'sqlite', skip: sqliteSkip, create: sqliteSkip ? refuse(sqliteSkip) : createSqliteTestStore },
    {
      backend: 'postgres',
      skip: pgSkip,
      create: pgSkip || !pg?.dsn ? refuse(pgSkip ?? 'no DSN') : (o) => createPostgresTestStore(pg.dsn as string, o),
    },
  ];
}
