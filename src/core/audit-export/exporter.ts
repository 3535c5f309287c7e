/**
 * The audit export service on `ctx.services.auditExport`: where workers read from, the device
 * identity stamped on lines, and the export pool, started on the first export (a server that never
 * exports spawns no export threads) and closed at shutdown.
 */
import { join } from 'node:path';
import { ledgerDevice } from '../../encoders/ledger-fields.js';
import { SQLITE_FILE_NAME } from '../../store/sqlite/sqlite-store.js';
import type { StoreConfig } from '../../store/store-types.js';
import { createExportPool, type ExportPool } from '../../workers/export-pool.js';
import type { ExportSource } from '../../workers/export-protocol.js';
import type { ExportRunner } from './export-stream.js';

/** Options of {@link AuditExporter}. */
export interface AuditExporterOptions {
  source: ExportSource;
  /** the build's version (device version on every line) */
  version: string;
  /** export threads (default: every core) */
  threads?: number;
  pageSize?: number;
  maxInFlight?: number;
}

/** The source the export workers read: the same database the store was opened on. */
export function exportSourceFor(config: Pick<StoreConfig, 'backend' | 'dataDir' | 'dsn' | 'pgAppRole'>): ExportSource {
  if (config.backend === 'sqlite') return { kind: 'sqlite', file: join(config.dataDir, SQLITE_FILE_NAME) };
  if (!config.dsn) throw new Error('a postgres export source needs the store DSN');
  return { kind: 'postgres', dsn: config.dsn, ...(config.pgAppRole !== undefined ? { appRole: config.pgAppRole } : {}) };
}

/** Runs exports on a lazily started worker pool. */
export class AuditExporter {
  readonly #opts: AuditExporterOptions;
  #pool: ExportPool | undefined;
  #closed = false;

  constructor(opts: AuditExporterOptions) {
    this.#opts = opts;
  }

  /** Where the export threads read from (the store the server runs on). */
  get source(): ExportSource {
    return this.#opts.source;
  }

  /** Runs a task of another export worker module on the export threads (export-pool.ts `runIn`; starts the pool on first use). */
  runTask<Req, Res>(filename: string, task: Req, transferList?: ArrayBuffer[]): Promise<Res> {
    return this.#startedPool().runIn<Req, Res>(filename, task, transferList);
  }

  #startedPool(): ExportPool {
    if (this.#closed) throw new Error('the audit exporter is closed');
    return (this.#pool ??= createExportPool(this.#opts.threads !== undefined ? { threads: this.#opts.threads } : {}));
  }

  /** The runner of one export (starts the pool on first use). */
  runner(): ExportRunner {
    const pool = this.#startedPool();
    const runner: ExportRunner = {
      encodePage: (req) => pool.run(req, req.buffer !== undefined ? [req.buffer] : undefined),
      source: this.#opts.source,
      device: ledgerDevice(this.#opts.version),
      // Four pages per thread: the pages finish out of order (the threads run below the main thread's
      // priority, export-worker.ts), and a thread done with its page must find the next one queued
      // while the head page is still encoding or being written. Memory: 8 pages of ≤ 1 MB on 2 cores.
      maxInFlight: this.#opts.maxInFlight ?? pool.threads * 4,
    };
    if (this.#opts.pageSize !== undefined) runner.pageSize = this.#opts.pageSize;
    return runner;
  }

  /** Stops the pool; running pages are cancelled (their exports end without a terminator). */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool) await pool.close({ force: true });
  }
}
