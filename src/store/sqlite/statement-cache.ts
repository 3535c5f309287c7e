/**
 * Prepared statements kept across Kysely queries (docs/perf/request-path.md).
 *
 * Kysely's SQLite driver calls `prepare(sql)` for every query it runs, and better-sqlite3 compiles
 * the text each time (~30 µs here, measured under load); a request of the audited-write path runs
 * about ten queries whose texts are always the same. This view of the connection hands Kysely the
 * statement it prepared before for the same text. A statement still iterating (a streamed query)
 * is busy and cannot run twice, so a busy one is never handed out: that call gets a fresh statement.
 * The cache is bounded (texts with a variable number of parameters, `in (?, ?, …)`, vary); the
 * oldest entry goes first. Only Kysely's queries go through it: raw-handle callers prepare their own.
 */
import type BetterSqlite3 from 'better-sqlite3';

/** Statements kept at most. */
export const STATEMENT_CACHE_MAX = 500;

/** The `database` Kysely's SqliteDialect needs: `prepare` and `close`. */
export interface CachingDatabase {
  prepare(sql: string): BetterSqlite3.Statement;
  close(): void;
}

/** A view of `sqlite` whose `prepare` reuses statements by text. */
export function cachedStatements(sqlite: BetterSqlite3.Database, max = STATEMENT_CACHE_MAX): CachingDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(text: string): BetterSqlite3.Statement {
      const hit = cache.get(text);
      if (hit !== undefined && !hit.busy) return hit;
      const stmt = sqlite.prepare(text);
      if (hit === undefined) {
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        cache.set(text, stmt);
      }
      return stmt;
    },
    close(): void {
      cache.clear();
      sqlite.close();
    },
  };
}
