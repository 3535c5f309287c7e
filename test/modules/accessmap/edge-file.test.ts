import { recordHooks } from '../../../src/routes.js';
import assert from 'node:assert/strict';
import { copyFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { createAgent, deleteAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { mergeOnWorker, waitingRows } from '../../../src/modules/accessmap/recent-edges.js';
import { EDGE_FILE_NAME } from '../../../src/modules/accessmap/sqlite-edge-file.js';
import type { SqliteWriter } from '../../../src/store/store.js';
import { createSqliteTestStore, selectedBackends, type TestStore } from '../../helpers/stores.js';
import { undoEdgeFile } from './undo-migration-010.js';
import { addTenant } from '../../store/store-fixtures.js';

const skip = selectedBackends().has('sqlite') ? false : `SVC_TEST_STORES=${process.env['SVC_TEST_STORES']} excludes sqlite`;
const AT = '2026-06-01T10:00:00.000000000Z';

async function withStore(fn: (h: TestStore) => Promise<void>): Promise<void> {
  const h = await createSqliteTestStore();
  try {
    await h.store.migrate();
    await fn(h);
  } finally {
    await h.dispose();
  }
}

const observe = (tag: string, n: number): Observation[] =>
  Array.from({ length: n }, (_, i) => ({
    origin: { kind: 'identity', ref: `${tag}-ident-${i % 7}` },
    resource: { ref: `${tag}-res-${i}` },
    mode: i % 3 === 0 ? 'rw' : 'r',
    confidence: 'high',
    signal_source: tag,
    observed_at: AT,
  }));

const count = async (h: TestStore, sql: string, params: unknown[] = []): Promise<number> =>
  Number((await h.admin.query<{ n: number }>(sql, params))[0]?.n);
const has = async (h: TestStore, schema: string, table: string): Promise<boolean> =>
  (await count(h, `select count(*) as n from ${schema}.sqlite_master where type = 'table' and name = ?`, [table])) === 1;
const markOf = async (h: TestStore): Promise<number> => count(h, 'select up_to as n from edges.access_edges_merged');

/** Every edge of the edge file, as stored (seq and all). */
const allEdges = (h: TestStore) => h.admin.query('select * from access_edges order by seq');

describe('sqlite: the edge file (access_edges beside svc.db)', { skip }, () => {
  it('a new store keeps access_edges in svc-edges.db (0600), not in svc.db; both files carry one id', async () => {
    await withStore(async (h) => {
      const tenant = await addTenant(h.store);
      await ingestObservations(h.store, tenant, observe('new', 10));
      await listEdges(h.store, tenant, { limit: 10 });
      const file = join(h.config.dataDir, EDGE_FILE_NAME);
      for (const f of [file, `${file}-wal`]) assert.equal(statSync(f).mode & 0o077, 0, `${f} is readable by group or others`);
      assert.equal(await has(h, 'main', 'access_edges'), false, 'svc.db holds no access_edges');
      assert.equal(await has(h, 'edges', 'access_edges'), true);
      assert.equal(await count(h, 'select count(*) as n from edges.access_edges where tenant_id = ?', [tenant]), 10);
      const [main] = await h.admin.query<{ file_id: string }>('select file_id from main.access_edges_file');
      const [edges] = await h.admin.query<{ file_id: string }>('select file_id from edges.access_edges_merged');
      assert.match(main?.file_id ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(edges?.file_id, main?.file_id);
      const ok = await h.admin.query<{ integrity_check: string }>('pragma integrity_check');
      assert.deepEqual(ok.map((r) => r.integrity_check), ['ok']);
    });
  });

  it('a database with its edges still in svc.db gets them moved at start: every row, seq and index, and the seq counter', async () => {
    await withStore(async (h) => {
      const tenant = await addTenant(h.store);
      await ingestObservations(h.store, tenant, observe('move', 120));
      await listEdges(h.store, tenant, { limit: 1 });
      // The newest edge deleted: the counter must still be above its seq after the move.
      const [top] = await h.admin.query<{ seq: number }>('select max(seq) as seq from access_edges');
      await h.admin.query('delete from access_edges where seq = ?', [top?.seq]);
      const before = await allEdges(h);
      await undoEdgeFile(h);
      assert.equal(await has(h, 'main', 'access_edges'), true, 'back in svc.db, as before the edge file');
      await h.store.close();
      const store = await h.reopen();
      await store.migrate();
      assert.equal(await has(h, 'main', 'access_edges'), false);
      assert.deepEqual(await allEdges(h), before, 'the same rows, seqs included');
      const indexes = await h.admin.query<{ name: string }>(
        "select name from edges.sqlite_master where type = 'index' and tbl_name = 'access_edges' order by name",
      );
      assert.deepEqual(indexes.map((i) => i.name), ['access_edges_key', 'access_edges_resource_idx', 'sqlite_autoindex_access_edges_1']);
      await ingestObservations(store, tenant, observe('after-move', 5));
      await listEdges(store, tenant, { limit: 1 });
      const [low] = await h.admin.query<{ seq: number }>("select min(seq) as seq from access_edges where signal_source = 'after-move'");
      assert.ok(
        Number(low?.seq) > Number(top?.seq),
        `a new edge's seq (${low?.seq}) is above every seq handed out before the move (${top?.seq})`,
      );
    });
  });

  it('a move cut short after the copy is made again from svc.db, once', async () => {
    await withStore(async (h) => {
      const tenant = await addTenant(h.store);
      await ingestObservations(h.store, tenant, observe('cut', 80));
      await listEdges(h.store, tenant, { limit: 1 });
      const before = await allEdges(h);
      await undoEdgeFile(h);
      // What a crash between the two steps leaves: the table in svc.db, a copy (here a part) in the edge file.
      await h.admin.query('create table edges.access_edges as select * from main.access_edges where seq % 2 = 0');
      await h.admin.query('create table edges.access_edges_merged (id integer primary key, up_to integer not null, file_id text not null)');
      await h.admin.query("insert into edges.access_edges_merged values (1, 0, '00000000-0000-4000-8000-000000000000')");
      await h.store.close();
      const store = await h.reopen();
      await store.migrate();
      assert.deepEqual(await allEdges(h), before, 'each edge once');
      assert.equal((await listEdges(store, tenant, { limit: 1000 })).items.length, 80);
    });
  });

  it('a missing or foreign edge file stops the store from opening, naming the file', async () => {
    const other = await createSqliteTestStore();
    try {
      await other.store.migrate();
      await other.store.close();
      await withStore(async (h) => {
        const tenant = await addTenant(h.store);
        await ingestObservations(h.store, tenant, observe('gone', 5));
        await h.store.close();
        const file = join(h.config.dataDir, EDGE_FILE_NAME);
        const keep = `${file}.keep`;
        copyFileSync(file, keep);
        for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
        await assert.rejects(
          h.reopen(),
          (err: Error & { code?: string }) =>
            err.code === 'invalid_config' && /svc-edges\.db: the access map's edges are missing/.test(err.message),
        );
        copyFileSync(join(other.config.dataDir, EDGE_FILE_NAME), file);
        await assert.rejects(
          h.reopen(),
          (err: Error & { code?: string }) => err.code === 'invalid_config' && /belongs to another database/.test(err.message),
        );
        rmSync(file);
        copyFileSync(keep, file);
        const store = await h.reopen();
        await store.migrate();
        assert.equal((await listEdges(store, tenant, { limit: 100 })).items.length, 5, 'its own edge file back: every edge');
      });
    } finally {
      await other.dispose();
    }
  });

  it(
    'grouped transactions never write the edge file: with its write lock held elsewhere, ingest, grants and agent deletes commit',
    async () => {
      await withStore(async (h) => {
        const tenant = await addTenant(h.store);
        const agent = await createAgent(h.store, tenant, { name: 'edge-lock' });
        const gone = await createAgent(h.store, tenant, { name: 'edge-lock-gone' });
        await ingestObservations(h.store, tenant, [
          {
            origin: { kind: 'agent', id: gone.id },
            resource: { ref: 'lock-res-gone' },
            mode: 'r',
            confidence: 'high',
            signal_source: 'lock',
            observed_at: AT,
          },
        ]);
        await listEdges(h.store, tenant, { limit: 1 });
        // Another connection holds the edge file's write lock, as a merge on another thread would.
        const holder = new BetterSqlite3(join(h.config.dataDir, EDGE_FILE_NAME), { timeout: 0 });
        try {
          holder.exec('begin immediate');
          await ingestObservations(h.store, tenant, [
            {
              origin: { kind: 'agent', id: agent.id },
              resource: { ref: 'lock-res' },
              mode: 'r',
              confidence: 'high',
              signal_source: 'lock',
              observed_at: AT,
            },
            ...observe('lock', 50),
          ]);
          await upsertGrants(h.store, tenant, [
            { origin: { kind: 'agent', id: agent.id }, resource: { ref: 'lock-granted' }, mode: 'rw', source: 'iam' },
          ]);
          await deleteAgent(h.store, recordHooks(), tenant, gone.id);
          holder.exec('commit');
        } finally {
          holder.close();
        }
        const edges = (await listEdges(h.store, tenant, { limit: 1000 })).items;
        assert.equal(edges.length, 52, 'the observations and the grant, and none of the deleted agent');
        assert.equal(edges.filter((e) => e.origin_id === gone.id).length, 0);
        assert.equal(edges.filter((e) => e.permitted).length, 1);
      });
    },
  );

  it('a crash between a merge and the removal of its rows from the level counts nothing twice', async () => {
    await withStore(async (h) => {
      const tenant = await addTenant(h.store);
      await ingestObservations(h.store, tenant, observe('crash', 300));
      // The merge commits (edges and mark, in the edge file); its rows stay in the level, as a
      // crash before the next transaction that removes them would leave them.
      const merged = await mergeOnWorker(h.store);
      assert.equal(merged, 300);
      assert.equal(await count(h, 'select count(*) as n from access_edges_recent'), 300, 'the merged rows wait to be removed');
      assert.equal(await markOf(h), await count(h, 'select max(seq) as n from access_edges_recent'), 'the mark covers them');
      await h.store.close();
      const store = await h.reopen();
      await store.migrate();
      const edges = (await listEdges(store, tenant, { limit: 1000 })).items;
      assert.equal(edges.length, 300);
      assert.ok(edges.every((e) => e.observed_count === 1), 'each observation counted once');
      assert.equal(await count(h, 'select count(*) as n from access_edges_recent'), 0, 'the read removed them');
      await ingestObservations(store, tenant, observe('crash', 300));
      assert.ok(
        (await listEdges(store, tenant, { limit: 1000 })).items.every((e) => e.observed_count === 2),
        'the same accesses again: two each',
      );
    });
  });

  it('files restored from different moments: the level never hands out a seq the edge file counts as merged', async () => {
    await withStore(async (h) => {
      const tenant = await addTenant(h.store);
      await ingestObservations(h.store, tenant, observe('restore', 50));
      assert.equal((await listEdges(h.store, tenant, { limit: 1000 })).items.length, 50);
      assert.ok((await markOf(h)) >= 50);
      await h.store.close();
      // svc.db as it was before any of those rows: its level's counter back at 0.
      await h.admin.query("delete from sqlite_sequence where name = 'access_edges_recent'");
      const store = await h.reopen();
      await store.migrate();
      await ingestObservations(store, tenant, observe('restore-after', 10));
      assert.equal((await listEdges(store, tenant, { limit: 1000 })).items.length, 60, 'the rows after the restore are merged');
    });
  });

  it('a merge that fails part way changes nothing: the mark, the edges and the level stay as they were', async () => {
    await withStore(async (h) => {
      const tenant = await addTenant(h.store);
      await ingestObservations(h.store, tenant, observe('fail', 200));
      await listEdges(h.store, tenant, { limit: 1 });
      await ingestObservations(h.store, tenant, observe('fail-2', 150));
      const mark = await markOf(h);
      const edgesBefore = await allEdges(h);
      // Last in the level: a row whose edge id an edge of the tenant already has, so the merge fails on its last row.
      const [taken] = await h.admin.query<{ id: string }>('select id from access_edges where tenant_id = ? limit 1', [tenant]);
      const cols =
        'id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, observed_count, first_seen, last_seen, ' +
        'confidence, signal_source, recorded_at';
      await h.admin.query(
        `insert into access_edges_recent (${cols}) values (?, ?, 'identity', ?, 999101, ?, 999102, 'r', 1, ?, ?, 'high', 's', ?)`,
        [taken?.id, tenant, crypto.randomUUID(), crypto.randomUUID(), AT, AT, AT],
      );
      const transaction = (h.store.sqlite as SqliteWriter).transaction;
      await assert.rejects(mergeOnWorker(h.store), /UNIQUE constraint failed/);
      assert.equal(await markOf(h), mark);
      assert.deepEqual(await allEdges(h), edgesBefore, 'none of the 150 rows before the bad one was kept');
      assert.equal(await transaction((db) => waitingRows(db)), 151);
      await h.admin.query('delete from access_edges_recent where origin_no = 999101');
      const edges = (await listEdges(h.store, tenant, { limit: 1000 })).items;
      assert.equal(edges.length, 350);
      assert.ok(edges.every((e) => e.observed_count === 1));
    });
  });
});
