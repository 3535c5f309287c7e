/**
 * A SQLite file an area declares beside svc.db (module-storage.ts `SqliteAttachedFile`), from the store's side: a test-only area
 * declares one, and the store creates, attaches and checks it, runs its hooks, and `svc backup` copies it. The area is registered in
 * this file's process only (node --test runs each file in its own), so no other test sees it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { SqliteAttachedFile } from '../../../src/store/module-storage.js';
import { backupSqliteDataDir } from '../../../src/store/sqlite/backup.js';
import { openStore, type SqliteWriter } from '../../../src/store/store.js';
import { storage } from '../../../src/storage.js';

const calls: string[] = [];
const logged: string[] = [];
const notes: SqliteAttachedFile = {
  file: 'svc-test-notes.db',
  schema: 'notes_file',
  check: (_sqlite, path) => {
    calls.push(`check ${path}`);
    return true;
  },
  afterOpen: () => void calls.push('afterOpen'),
  afterMigrate: (sqlite) => {
    if (sqlite.prepare("select 1 from notes_file.sqlite_master where name = 'notes'").get() !== undefined) return undefined;
    sqlite.exec('create table notes_file.notes (id integer primary key, text text not null) strict');
    sqlite.exec("insert into notes (text) values ('kept')");
    return { fields: { table: 'notes' }, msg: 'test notes made' };
  },
  backupFacts: (reader) => ({ notes: Number((reader.prepare('select count(*) as n from notes_file.notes').get() as { n: number }).n) }),
};
storage.register([{ name: 'attach-test', tables: [], migrations: { sqlite: [], postgres: [] }, sqliteFiles: [notes] }]);

describe('sqlite: a file an area attaches beside svc.db', () => {
  it('is created 0600 in the data dir, checked and attached at open, filled after migrate, and copied by svc backup', async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-attached-'));
    const data = join(root, 'data');
    const dest = join(root, 'backup');
    const log = { info: (_o: object, msg?: string) => void logged.push(msg ?? ''), warn: () => {} };
    const store = await openStore({ backend: 'sqlite', dataDir: data }, log);
    try {
      const file = join(data, notes.file);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.deepEqual(calls, [`check ${file}`, 'afterOpen']);
      await store.migrate();
      assert.ok(logged.includes('test notes made'), 'afterMigrate told the store what it did');
      await store.migrate();
      assert.equal(logged.filter((m) => m === 'test notes made').length, 1, 'nothing to do the second time: nothing logged');

      // Through the store's own connection: the schema is attached there, its tables readable bare.
      const seen = await (store.sqlite as SqliteWriter).transaction((db) => ({
        tables: db.prepare("select name from notes_file.sqlite_master where type = 'table'").all(),
        text: db.prepare('select text from notes').get(),
      }));
      assert.deepEqual(seen, { tables: [{ name: 'notes' }], text: { text: 'kept' } });
      const viaKysely = await store.transaction((tx) => sql<{ n: number }>`select count(*) as n from notes_file.notes`.execute(tx));
      assert.equal(Number(viaKysely.rows[0]?.n), 1);

      const r = await backupSqliteDataDir(data, dest);
      const copy = join(dest, notes.file);
      assert.ok(r.files.some((f) => f.file === copy), 'the file is listed');
      assert.equal(statSync(copy).mode & 0o777, 0o600);
      const db = new BetterSqlite3(copy, { readonly: true });
      try {
        assert.deepEqual(db.prepare('select text from notes').all(), [{ text: 'kept' }]);
      } finally {
        db.close();
      }
      // The facts of every file, after the files and before the timings, in registration order: the access map's first.
      assert.deepEqual(Object.keys(r), ['dir', 'files', 'recent_level_rows', 'merged_up_to', 'notes', 'lock_ms', 'ms']);
      assert.equal(r['notes'], 1);
    } finally {
      await store.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
