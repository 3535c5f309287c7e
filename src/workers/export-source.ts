/**
 * Read-only ledger readers for the export worker: each worker opens its own connection per source
 * (never the server's writer connection), reads one seq range and returns decoded records. The SQL
 * itself is ledger-store.ts's (the one place that knows how records are stored).
 * SQLite: a `readonly` better-sqlite3 handle on `svc.db` (WAL: readers never block the writer).
 * Postgres: a one-connection `Store`, so the role and `app.tenant_id` are set by the very code path
 * the server uses (postgres-store.ts `withTenant`) and RLS confines every read.
 */
import BetterSqlite3 from 'better-sqlite3';
import { readRecords, sqliteRecordReader } from '../ledger/ledger-store.js';
import type { AuditRecord } from '../ledger/record.js';
import { openStore, type Store } from '../store/store.js';
import type { ExportFilter, ExportSource } from './export-protocol.js';

/** An open reader of one source. */
export interface LedgerReader {
  /** records of `tenant` with seq in [fromSeq, toSeq], ascending, matching `filter` */
  read(tenant: string, fromSeq: number, toSeq: number, filter: ExportFilter): Promise<AuditRecord[]>;
  close(): Promise<void>;
}

function sqliteReader(file: string): LedgerReader {
  // readonly + fileMustExist: an export never creates or writes the database. Each page is one
  // statement, so one read snapshot; the range is immutable below the head fixed at export start.
  const handle = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 5000 });
  const read = sqliteRecordReader(handle);
  return {
    read: async (tenant, fromSeq, toSeq, filter) => read(tenant, fromSeq, toSeq, filter),
    close: async () => {
      handle.close();
    },
  };
}

function postgresReader(dsn: string, appRole: string | undefined): LedgerReader {
  let opened: Promise<Store> | undefined;
  const store = () => (opened ??= openStore({ backend: 'postgres', dataDir: '', dsn, poolSize: 1, ...(appRole !== undefined ? { pgAppRole: appRole } : {}) }));
  return {
    read: async (tenant, fromSeq, toSeq, filter) =>
      (await store()).withTenant(tenant, (tx) => readRecords(tx, tenant, fromSeq, toSeq - fromSeq + 1, { ...filter, toSeq })),
    close: async () => {
      if (opened) await (await opened).close();
    },
  };
}

/** A stable cache key of a source (the DSN may carry a password; it never leaves the worker). */
export function sourceKey(source: ExportSource): string {
  return source.kind === 'sqlite' ? `sqlite:${source.file}` : `postgres:${source.appRole ?? ''}:${source.dsn}`;
}

/** Opens a reader on a source. */
export function openReader(source: ExportSource): LedgerReader {
  return source.kind === 'sqlite' ? sqliteReader(source.file) : postgresReader(source.dsn, source.appRole);
}
