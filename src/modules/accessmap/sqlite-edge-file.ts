/**
 * The edge file: `<dataDir>/svc-edges.db`, a second SQLite file beside `svc.db` that holds the
 * access map's `access_edges` (docs/accessmap.md "The edge file"). The access map's storage
 * declares it (storage.ts, `sqliteFiles`); the store attaches it to its connection as `edges`
 * (store/sqlite/attached-files.ts), so every query names `access_edges` as before (SQLite finds an
 * unqualified table in `main` first, then in attached files), and calls the hooks below.
 *
 * Why a file of its own: merging the recent level into `access_edges` is the largest write the
 * service makes, and SQLite has one writer per file. With the edges in a file of their own a merge
 * writes that file only, and can move to a thread of its own without holding `svc.db`'s writer.
 *
 * What holds the two files together:
 * - `access_edges_merged` (in the edge file) says up to which seq of the recent level (in
 *   `svc.db`) the edges hold the level's rows; it is written in the transaction of each merge, so a
 *   crash leaves either both or neither. Rows of the level at or below it are only removed later,
 *   in a transaction that writes `svc.db` alone (recent-edges.ts), never in one that merges.
 * - A transaction that writes both files is atomic in each but not across the two (SQLite in WAL
 *   mode, sqlite.org/lang_attach.html), so the service never writes both in one transaction where
 *   the order of the two commits could lose or double a row (recent-edges.ts says which do which).
 * - A random id, written into both files when the edges move, ties them: a missing or foreign
 *   edge file stops the store from opening instead of showing an empty access map.
 *
 * Moving the edges: the migrations build `access_edges` in `svc.db` as they always have; after
 * them, `relocateEdges` copies the table (rows, seqs, AUTOINCREMENT counter, indexes) into the edge
 * file in a transaction that writes the edge file alone, then drops it from `svc.db` in one that
 * writes `svc.db` alone. A crash between the two leaves the table in both; the next start copies
 * again from `svc.db`, so the step can be repeated any number of times.
 *
 * Backups (store/sqlite/backup.ts): copying the two files one after the other is not a copy of one
 * instant: observations committed between the two copies and merged into the edge file would name
 * nodes the svc.db copy lacks (or, in the other order, rows merged and removed from the recent level
 * between the copies would be lost). `svc backup` therefore fixes both snapshots while it holds
 * svc.db's write lock, so no row enters or leaves the level meanwhile. The merge worker may go on
 * writing the edge file; a merge moves rows from the level into the edges and its mark past them,
 * and removes nothing from svc.db. What the edge snapshot holds beyond svc.db's is then only rows of
 * the svc.db snapshot's level merged at or below its mark, which the next start removes from the
 * level (counted once, as after a crash between a merge and the removal).
 */
import { randomUUID } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteAttachedFile } from '../../store/module-storage.js';
import { hasTable } from '../../store/sqlite/attached-files.js';
import { StoreError } from '../../store/store-error.js';

/** File name of the edge file inside the data directory. */
export const EDGE_FILE_NAME = 'svc-edges.db';
/** The schema name the edge file is attached under. */
export const EDGE_SCHEMA = 'edges';

/**
 * Refuses an edge file that is not this database's: `svc.db` says its edges moved (its
 * `access_edges_file` row) but the edge file is missing them or carries another id. Run at open,
 * before anything reads edges. Returns whether svc.db records the move.
 */
function checkEdgeFile(sqlite: BetterSqlite3.Database, file: string): boolean {
  if (!hasTable(sqlite, 'main', 'access_edges_file')) return false;
  const want = (sqlite.prepare('select file_id from main.access_edges_file').get() as { file_id: string } | undefined)?.file_id;
  const got = hasTable(sqlite, EDGE_SCHEMA, 'access_edges_merged')
    ? (sqlite.prepare(`select file_id from ${EDGE_SCHEMA}.access_edges_merged`).get() as { file_id: string } | undefined)?.file_id
    : undefined;
  if (want !== undefined && got === want && hasTable(sqlite, EDGE_SCHEMA, 'access_edges')) return true;
  // svc.db still holding access_edges is a move cut short by a crash: relocateEdges copies it again.
  if (hasTable(sqlite, 'main', 'access_edges')) return true;
  throw new StoreError(
    'invalid_config',
    got === undefined
      ? `${file}: the access map's edges are missing (svc.db says they are in this file, id ${want}); restore it from the backup taken ` +
          `with svc.db`
      : `${file}: this edge file belongs to another database (id ${got}, svc.db expects ${want}); restore the one taken with svc.db`,
  );
}

/**
 * Moves `access_edges` from `svc.db` into the edge file, if it is still in `svc.db` (after the
 * migrations; the module header says how a crash part way is repaired). Returns the rows moved, or
 * undefined if there was nothing to move.
 */
function relocateEdges(sqlite: BetterSqlite3.Database): number | undefined {
  if (!hasTable(sqlite, 'main', 'access_edges')) return undefined;
  let moved: number | undefined;
  let step2: string | undefined;
  // 1. The edge file alone: copy (over whatever an interrupted move left there). IMMEDIATE: the
  // write locks up front, so another process migrating the same files is waited for (busy_timeout);
  // what it has moved meanwhile is then found moved.
  sqlite.transaction(() => {
    if (!hasTable(sqlite, 'main', 'access_edges')) return;
    const ddl = sqlite
      .prepare("select type, name, sql from main.sqlite_master where tbl_name = 'access_edges' and sql is not null")
      .all() as Array<{ type: string; name: string; sql: string }>;
    const table = ddl.find((d) => d.type === 'table');
    if (table === undefined) throw new Error('access_edges: no table definition in svc.db');
    // The tenant's foreign key cannot reach across files (SQLite keeps foreign keys within one
    // schema); tenants are never removed, and every write checks its tenant first (scope.ts).
    const tableSql = table.sql
      .replace(/^CREATE TABLE\s+"?access_edges"?\s*\(/i, `create table ${EDGE_SCHEMA}.access_edges (`)
      .replace(/\s+references tenants\s*\(id\)/i, '');
    const indexSql = ddl
      .filter((d) => d.type === 'index')
      .map((d) =>
        d.sql.replace(
          /^CREATE (UNIQUE )?INDEX\s+"?(\w+)"?\s+on/i,
          (_m, u: string | undefined, n: string) => `create ${u ?? ''}index ${EDGE_SCHEMA}.${n} on`,
        ),
      );
    // The id svc.db already names (a file whose edges were moved back by hand), else a new one.
    const fileId = hasTable(sqlite, 'main', 'access_edges_file')
      ? (sqlite.prepare('select file_id from main.access_edges_file').get() as { file_id: string } | undefined)?.file_id
      : randomUUID();
    if (fileId === undefined) throw new Error('access_edges_file: no row in svc.db');
    sqlite.exec(`drop table if exists ${EDGE_SCHEMA}.access_edges; drop table if exists ${EDGE_SCHEMA}.access_edges_merged`);
    sqlite.exec(tableSql);
    for (const s of indexSql) sqlite.exec(s);
    moved = sqlite.prepare(`insert into ${EDGE_SCHEMA}.access_edges select * from main.access_edges order by seq`).run().changes;
    // Seqs are never handed out twice (migration 14): the counter comes along, also past edges deleted since.
    const counter =
      (sqlite.prepare("select max(seq) as seq from main.sqlite_sequence where name = 'access_edges'").get() as { seq: number | null })
        .seq ?? 0;
    sqlite.prepare(`delete from ${EDGE_SCHEMA}.sqlite_sequence where name = 'access_edges'`).run();
    sqlite
      .prepare(
        `insert into ${EDGE_SCHEMA}.sqlite_sequence (name, seq) values ('access_edges', max(?, coalesce((select max(seq) from ` +
          `${EDGE_SCHEMA}.access_edges), 0)))`,
      )
      .run(counter);
    // Before the move a merge emptied the level of what it merged, so every row waiting there is
    // unmerged: the mark starts at 0. (A move cut short after this step is copied again with the
    // same mark: no merge runs before the store has finished migrating.)
    sqlite.exec(`create table ${EDGE_SCHEMA}.access_edges_merged (
      id integer primary key check (id = 1),
      up_to integer not null check (up_to >= 0),
      file_id text not null
    ) strict`);
    sqlite.prepare(`insert into ${EDGE_SCHEMA}.access_edges_merged (id, up_to, file_id) values (1, 0, ?)`).run(fileId);
    // 2 comes in a transaction of its own (below): svc.db alone.
    step2 = fileId;
  }).immediate();
  if (step2 === undefined) return undefined;
  const fileId = step2;
  // 2. svc.db alone: drop the old table, remember where the edges went.
  sqlite.transaction(() => {
    sqlite.exec('drop table main.access_edges');
    if (!hasTable(sqlite, 'main', 'access_edges_file')) {
      sqlite.exec('create table main.access_edges_file (id integer primary key check (id = 1), file_id text not null) strict');
      sqlite.prepare('insert into main.access_edges_file (id, file_id) values (1, ?)').run(fileId);
    }
  }).immediate();
  return moved;
}

/**
 * Raises the recent level's seq counter (svc.db) to the edge file's mark, if it is below: a seq at
 * or below the mark counts as merged, so one handed out again would never be. The two only
 * disagree after a restore of files copied at different moments (docs/storage.md "Backups");
 * then this keeps new rows from vanishing, whatever else the mismatch cost. Run at open, once the
 * edges have moved.
 */
function keepLevelAboveMark(sqlite: BetterSqlite3.Database): void {
  if (!hasTable(sqlite, EDGE_SCHEMA, 'access_edges_merged') || !hasTable(sqlite, 'main', 'access_edges_recent')) return;
  sqlite
    .transaction(() => {
      const mark = Number(
        (sqlite.prepare(`select up_to from ${EDGE_SCHEMA}.access_edges_merged`).get() as { up_to: number } | undefined)?.up_to ?? 0,
      );
      const counter =
        (
          sqlite.prepare("select max(seq) as seq from main.sqlite_sequence where name = 'access_edges_recent'").get() as {
            seq: number | null;
          }
        ).seq ?? 0;
      if (counter >= mark) return;
      sqlite.prepare("delete from main.sqlite_sequence where name = 'access_edges_recent'").run();
      sqlite.prepare("insert into main.sqlite_sequence (name, seq) values ('access_edges_recent', ?)").run(mark);
    })
    .immediate();
}

/** The edge file as the access map's storage declares it: the store attaches it, runs these at open and migrate, and backs it up. */
export const edgeFile: SqliteAttachedFile = {
  file: EDGE_FILE_NAME,
  schema: EDGE_SCHEMA,
  check: checkEdgeFile,
  afterOpen: keepLevelAboveMark,
  // After the migrations, which build access_edges in svc.db: into the edge file.
  afterMigrate: (sqlite) => {
    const moved = relocateEdges(sqlite);
    return moved === undefined ? undefined : { fields: { rows: moved }, msg: 'access map edges moved into the edge file' };
  },
  backupCheck: (reader, path, dataDir) => {
    if (!checkEdgeFile(reader, path) || !hasTable(reader, EDGE_SCHEMA, 'access_edges')) {
      throw new StoreError(
        'invalid_config',
        `${dataDir}: the access map's edges are not in ${EDGE_FILE_NAME} yet; start svc serve once (it moves them) and back up again`,
      );
    }
  },
  // Rows of the recent level in the copy, and the edge file's mark (the level's seq up to which the edges hold it).
  backupFacts: (reader) => ({
    recent_level_rows: Number((reader.prepare('select count(*) as n from main.access_edges_recent').get() as { n: number }).n),
    merged_up_to: Number((reader.prepare(`select up_to from ${EDGE_SCHEMA}.access_edges_merged`).get() as { up_to: number }).up_to),
  }),
};
