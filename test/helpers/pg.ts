/** Postgres test targets: which server to use (or why to skip) and throwaway databases on it. */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pg from 'pg';

/** Used when `SVC_TEST_PG_DSN` is unset and 127.0.0.1:5432 answers. */
export const PG_DEFAULT_DSN = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Skip reason when neither the variable is set nor a local server answers. */
export const PG_UNREACHABLE_REASON =
  'PostgreSQL not reachable at 127.0.0.1:5432; set SVC_TEST_PG_DSN to run the Postgres tests';

/** Either a DSN to run against, or the reason the Postgres tests are skipped. */
export type PgTestTarget = { dsn: string; skip?: undefined } | { dsn?: undefined; skip: string };

function probe(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

let cached: Promise<PgTestTarget> | undefined;

/**
 * The admin DSN for Postgres tests. `SVC_TEST_PG_DSN` set: always used, so an unreachable server
 * makes the tests fail. Unset: probe 127.0.0.1:5432 for at most 500 ms, else skip with a reason.
 */
export function pgTestDsn(env: NodeJS.ProcessEnv = process.env): Promise<PgTestTarget> {
  const explicit = env['SVC_TEST_PG_DSN'];
  if (explicit) return Promise.resolve({ dsn: explicit });
  cached ??= probe('127.0.0.1', 5432, 500).then((ok) => (ok ? { dsn: PG_DEFAULT_DSN } : { skip: PG_UNREACHABLE_REASON }));
  return cached;
}

/** Runs one statement on `dsn` with a short-lived client (admin work, outside any Store). */
export async function pgQuery<R extends object = Record<string, unknown>>(
  dsn: string,
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: dsn, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`PostgreSQL at ${redact(dsn)} is unreachable (SVC_TEST_PG_DSN): ${(err as Error).message}`);
  }
  try {
    const result = await client.query<R>(text, params);
    return result.rows;
  } finally {
    await client.end();
  }
}

/** `dsn` pointed at another database (and optionally another user). */
export function dsnFor(dsn: string, database: string, user?: string): string {
  const url = new URL(dsn);
  url.pathname = `/${database}`;
  if (user !== undefined) {
    url.username = user;
    url.password = '';
  }
  return url.toString();
}

function redact(dsn: string): string {
  try {
    const url = new URL(dsn);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(dsn)';
  }
}

/** A fresh database on the test server; `drop()` removes it even with open connections. */
export interface TempDatabase {
  name: string;
  dsn: string;
  drop(): Promise<void>;
}

/** A random lowercase identifier with a prefix, for databases and roles made by tests. */
export function randomName(prefix: string): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

/** Creates `svc_test_<random>` on the admin DSN's server (optionally owned by `owner`). */
export async function createTempDatabase(adminDsn: string, options: { owner?: string } = {}): Promise<TempDatabase> {
  const name = randomName('svc_test_');
  // template0: nobody connects to it, so CREATE DATABASE never waits on "source database is being accessed".
  const owner = options.owner ? ` owner "${options.owner}"` : '';
  await pgQuery(adminDsn, `create database "${name}" template template0${owner}`);
  let dropped = false;
  return {
    name,
    dsn: dsnFor(adminDsn, name),
    async drop() {
      if (dropped) return;
      dropped = true;
      await pgQuery(adminDsn, `drop database if exists "${name}" with (force)`);
    },
  };
}

/** Runs `fn` with a fresh database and drops it afterwards, whatever `fn` does. */
export async function withTempDatabase<T>(fn: (db: TempDatabase) => Promise<T>, adminDsn?: string): Promise<T> {
  let dsn = adminDsn;
  if (dsn === undefined) {
    const target = await pgTestDsn();
    if (target.skip !== undefined) throw new Error(target.skip);
    dsn = target.dsn;
  }
  const db = await createTempDatabase(dsn);
  try {
    return await fn(db);
  } finally {
    await db.drop();
  }
}
