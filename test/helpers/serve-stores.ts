/**
 * The real `svc serve` on each store backend of the test matrix: SQLite in a temporary data
 * directory, Postgres on a throwaway database (test/helpers/pg.ts). Tests that must hold on both
 * stores loop over {@link serveBackends}.
 */
import { createTempDatabase, pgTestDsn } from './pg.js';
import { selectedBackends } from './stores.js';
import { call, setupAndLogin, startServer, type StartOptions, type TestServer } from './server.js';
import type { StoreBackend } from '../../src/store/store.js';

export interface ServeBackend {
  backend: StoreBackend;
  /** why this backend does not run here, or undefined */
  skip: string | undefined;
  /** starts `svc serve` on a fresh store of this backend; `stop()` also drops the database */
  start(opts?: StartOptions): Promise<TestServer>;
}

/** The backends selected by `SVC_TEST_STORES` (all by default). */
export async function serveBackends(): Promise<ServeBackend[]> {
  const selected = selectedBackends();
  const pg = await pgTestDsn();
  const out: ServeBackend[] = [];
  if (selected.has('sqlite')) out.push({ backend: 'sqlite', skip: undefined, start: (opts = {}) => startServer(opts) });
  if (selected.has('postgres')) {
    out.push({
      backend: 'postgres',
      skip: pg.skip,
      start: async (opts = {}) => {
        if (pg.dsn === undefined) throw new Error(pg.skip);
        const db = await createTempDatabase(pg.dsn);
        try {
          const server = await startServer({ ...opts, args: ['--store', 'postgres', '--dsn', db.dsn, ...(opts.args ?? [])] });
          const stop = server.stop;
          server.stop = async (signal) => {
            try {
              return await stop(signal);
            } finally {
              await db.drop();
            }
          };
          return server;
        } catch (err) {
          await db.drop();
          throw err;
        }
      },
    });
  }
  return out;
}

/** A JSON client for one principal of a started server. */
export function client(server: TestServer, token: string, tenant?: string) {
  return (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(server, method, p, {
      headers: {
        authorization: `Bearer ${token}`,
        ...(tenant ? { 'x-service-tenant': tenant } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
}

export { setupAndLogin };
