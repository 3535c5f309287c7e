/**
 * Raw SQLite write rates, the ceilings the store benches compare against: better-sqlite3 on a
 * fresh database file with the store's own durability (WAL, synchronous=FULL), one transaction per
 * batch, one prepared multi-row statement, no validation, no ledger, no service code. Measured in
 * the same run as the figure it is a baseline for, because these machines are noisy.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

export interface RawTable {
  /** CREATE TABLE (and CREATE INDEX) statements, run once on the fresh file */
  ddl: readonly string[];
  /** the INSERT head without VALUES, e.g. `insert into t (a, b)` */
  insert: string;
  /** appended after the VALUES list, e.g. an ON CONFLICT clause */
  tail?: string;
  /** the number of bound values per row */
  columns: number;
}

/** Rows per second for `rows` rows written `batch` per transaction; `row(i)` gives row i's values. */
export function rawSqliteWriteRate(
  dir: string,
  name: string,
  table: RawTable,
  rows: number,
  batch: number,
  row: (i: number) => unknown[],
): number {
  const file = join(dir, `raw-${name}.db`);
  const db = new BetterSqlite3(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('cache_size = -65536');
    for (const s of table.ddl) db.exec(s);
    const per = 200;
    const one = `(${Array.from({ length: table.columns }, () => '?').join(', ')})`;
    const many = db.prepare(`${table.insert} values ${Array.from({ length: per }, () => one).join(', ')}${table.tail ?? ''}`);
    const single = db.prepare(`${table.insert} values ${one}${table.tail ?? ''}`);
    const started = performance.now();
    for (let i = 0; i < rows; i += batch) {
      const end = Math.min(rows, i + batch);
      db.transaction(() => {
        let j = i;
        for (; j + per <= end; j += per) {
          const params: unknown[] = [];
          for (let k = j; k < j + per; k++) params.push(...row(k));
          many.run(...params);
        }
        for (; j < end; j++) single.run(...row(j));
      })();
    }
    return rows / ((performance.now() - started) / 1000);
  } finally {
    db.close();
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
}
