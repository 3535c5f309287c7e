/**
 * Searches for erased strings as raw bytes, with ASCII case folding (A–Z ↔ a–z, the folding the
 * erasure applies): every file under a data directory, or every relation file of a Postgres
 * database (read with `pg_read_binary_file`, so the connecting user must be a superuser).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { pgQuery } from '../../helpers/pg.js';

/** `bytes` as text whose ASCII letters are lowered (latin1 keeps one character per byte). */
function folded(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

function hitsIn(bytes: Buffer, needles: readonly string[], where: string): string[] {
  const text = folded(bytes);
  return needles.filter((n) => text.includes(folded(Buffer.from(n, 'utf8')))).map((n) => `${where}: ${n}`);
}

/** Every file under `dir` holding one of `needles` (UTF-8, ASCII case folded). */
export function filesContainingFolded(dir: string, needles: readonly string[]): string[] {
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) hits.push(...hitsIn(readFileSync(p), needles, p.slice(dir.length + 1)));
    }
  };
  walk(dir);
  return hits;
}

/** Every relation (table, TOAST, index) of the database at `dsn` whose file holds one of `needles`. */
export async function relationsContaining(dsn: string, needles: readonly string[]): Promise<string[]> {
  const rels = await pgQuery<{ rel: string; path: string }>(
    dsn,
    `select c.oid::regclass::text as rel, pg_relation_filepath(c.oid) as path from pg_class c
     where c.relkind in ('r', 't', 'i', 'm') and pg_relation_filepath(c.oid) is not null and c.relpersistence = 'p'
       and c.relnamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)`,
  );
  const hits: string[] = [];
  for (const r of rels) {
    const [row] = await pgQuery<{ b: Buffer | null }>(dsn, 'select pg_read_binary_file($1, 0, 1000000000, true) as b', [r.path]);
    if (row?.b) hits.push(...hitsIn(row.b, needles, r.rel));
  }
  return hits;
}

/** Every `table.column` of the SQLite file `dbFile` (and its attached files' tables) whose live rows hold one of `needles`. */
export function liveSqliteColumns(dbFile: string, needles: readonly string[]): string[] {
  const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
  try {
    const hits: string[] = [];
    const tables = db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[];
    for (const { name } of tables) {
      const cols = db.prepare(`select name from pragma_table_info(?)`).all(name) as { name: string }[];
      for (const { name: col } of cols)
        for (const n of needles) {
          const row = db.prepare(`select 1 from "${name}" where instr(lower(cast("${col}" as text)), ?) > 0 limit 1`).get(n.toLowerCase());
          if (row) hits.push(`${name}.${col}: ${n}`);
        }
    }
    return hits;
  } finally {
    db.close();
  }
}
