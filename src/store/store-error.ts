/** Errors raised by the store layer itself (not by the database driver). */

/** Stable codes so callers can branch without parsing messages. */
export type StoreErrorCode =
  | 'invalid_config'
  | 'invalid_tenant_id'
  | 'schema_too_new'
  | 'isolation_broken'
  | 'store_closed'
  /** an fsync of the WAL failed: nothing is acknowledged after it (sqlite/wal-sync.ts) */
  | 'store_failed'
  /** another writer held the database past the busy timeout (svc backup) */
  | 'busy';

/** An error of the store layer with a stable `code`. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** True for a unique-constraint violation on either backend (SQLite extended code, SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown };
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === '23505';
}
