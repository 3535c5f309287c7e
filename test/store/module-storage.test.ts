/** The storage fold: every area's migrations and tables, refused at start when ambiguous (src/store/module-storage.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Migration } from '../../src/store/migrations.js';
import { checkStorage, StorageRegistry, type ModuleStorage, type SqliteAttachedFile } from '../../src/store/module-storage.js';
import { GLOBAL_TABLES, TENANT_TABLES } from '../../src/store/schema.js';
import { storage } from '../../src/storage.js';

const step = (version: number, name = `m${version}`): Migration => ({ version, name, up: async () => {} });
const area = (name: string, versions: number[], tables: string[] = []): ModuleStorage => ({
  name,
  tables: tables.map((t) => ({ name: t, scope: 'tenant', grants: ['select'], rls: true })),
  migrations: { sqlite: versions.map((v) => step(v)), postgres: versions.map((v) => step(v)) },
});

describe('module storage fold', () => {
  it('the registered areas number 1..N once each and declare exactly the tables of schema.ts', () => {
    const versions = storage.sqlite.map((m) => m.version);
    assert.deepEqual(versions, Array.from({ length: versions.length }, (_, i) => i + 1));
    assert.deepEqual(storage.postgres.map((m) => `${m.version}:${m.name}`), storage.sqlite.map((m) => `${m.version}:${m.name}`));
    assert.deepEqual(storage.tables('tenant').sort(), [...TENANT_TABLES].sort());
    assert.deepEqual(storage.tables('global').sort(), [...GLOBAL_TABLES].sort());
  });

  it('refuses a duplicate number, naming both areas', () => {
    assert.throws(() => checkStorage([area('a', [1, 2]), area('b', [2])]), /migration 2 is declared twice \(a and b\)/);
  });

  it('refuses a gap', () => {
    assert.throws(() => checkStorage([area('a', [1, 2]), area('b', [4])]), /migration 3 is missing/);
  });

  it('refuses a step on one backend only, and a table declared twice', () => {
    const lopsided: ModuleStorage = { ...area('c', [1]), migrations: { sqlite: [step(1)], postgres: [] } };
    assert.throws(() => checkStorage([lopsided]), /area c: its sqlite and postgres migrations differ/);
    assert.throws(() => checkStorage([area('a', [1], ['t']), area('b', [2], ['t'])]), /table t is declared twice \(a and b\)/);
  });

  it('refuses two areas attaching the same SQLite file, or under the same schema name; lists the files in registration order', () => {
    const file = (name: string, schema: string): SqliteAttachedFile => ({ file: name, schema, check: () => true });
    const attaching = (name: string, versions: number[], ...files: SqliteAttachedFile[]): ModuleStorage => ({
      ...area(name, versions),
      sqliteFiles: files,
    });
    assert.throws(
      () => checkStorage([attaching('a', [1], file('x.db', 'x')), attaching('b', [2], file('x.db', 'y'))]),
      /attached SQLite file x\.db is declared twice \(a and b\)/,
    );
    assert.throws(
      () => checkStorage([attaching('a', [1], file('x.db', 'x')), attaching('b', [2], file('y.db', 'x'))]),
      /attached SQLite schema x is declared twice \(a and b\)/,
    );
    assert.throws(() => checkStorage([attaching('a', [1], file('m.db', 'main'))]), /schema main is not a plain name of its own/);
    const r = new StorageRegistry([attaching('a', [1], file('x.db', 'x'))]);
    assert.throws(() => r.register([attaching('b', [2], file('x.db', 'z'))]), /declared twice/);
    r.register([attaching('c', [2], file('y.db', 'y'))]);
    assert.deepEqual(r.sqliteFiles().map((f) => f.file), ['x.db', 'y.db']);
    assert.deepEqual(storage.sqliteFiles().map((f) => [f.file, f.schema]), [['svc-edges.db', 'edges']]);
  });

  it('register adds an area in version order and leaves the lists unchanged when it refuses', () => {
    const r = new StorageRegistry([area('a', [1, 2])]);
    assert.throws(() => r.register([area('b', [2])]), /declared twice/);
    assert.deepEqual(r.sqlite.map((m) => m.version), [1, 2]);
    const b = area('b', [3]);
    r.register([b]);
    r.register([b]);
    assert.deepEqual(r.sqlite.map((m) => m.version), [1, 2, 3]);
    assert.equal(r.ownerOf(3), 'b');
  });
});
