import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { ingestObservations } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { SQLITE_FILE_NAME } from '../../../src/store/sqlite/sqlite-store.js';
import { EDGE_FILE_NAME } from '../../../src/modules/accessmap/sqlite-edge-file.js';
import { StoreError } from '../../../src/store/store-error.js';
import { openStore, type SqliteWriter } from '../../../src/store/store.js';
import { createSqliteTestStore, selectedBackends, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../store-fixtures.js';
import { SQLITE_MIGRATIONS } from '../../../src/store/sqlite/sqlite-migrations.js';

const skip = selectedBackends().has('sqlite') ? false : `SVC_TEST_STORES=${process.env['SVC_TEST_STORES']} excludes sqlite`;
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}.js`, import.meta.url));

async function withStore(overrides: Parameters<typeof createSqliteTestStore>[0], fn: (h: TestStore) => Promise<void>): Promise<void> {
  const h = await createSqliteTestStore(overrides);
  try {
    await fn(h);
  } finally {
    await h.dispose();
  }
}

/** Spawns a compiled fixture: `line` resolves with its first stdout line, `done` with all stdout once it exits 0. */
function runFixture(name: string, args: string[]): { line: Promise<string>; done: Promise<string> } {
  const child = spawn(process.execPath, [fixture(name), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let resolveLine!: (l: string) => void;
  const line = new Promise<string>((r) => (resolveLine = r));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('\n')) resolveLine(out.split('\n')[0] as string);
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<string>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${name} exited ${code}: ${err}`)))),
  );
  return { line, done };
}

describe('sqlite: embedded store specifics', { skip }, () => {
  it('keeps <dataDir>/svc.db at mode 0600 inside a data dir created 0700', async () => {
    await withStore({}, async (h) => {
      const nested = join(h.config.dataDir, 'a', 'b');
      const store = await h.reopen({ dataDir: nested });
      await store.migrate();
      await addTenant(store);
      assert.equal(statSync(nested).mode & 0o777, 0o700);
      for (const f of [SQLITE_FILE_NAME, `${SQLITE_FILE_NAME}-wal`, EDGE_FILE_NAME]) {
        assert.equal(statSync(join(nested, f)).mode & 0o077, 0, `${f} is readable by group or others`);
      }
    });
  });

  it(
    'runs WAL, synchronous FULL by default (the WAL fsynced by the store off the main thread), foreign keys and a busy timeout',
    async () => {
      await withStore({}, async ({ store }) => {
        const pragma = async (name: string) =>
          Object.values(
            (await store.transaction((tx) => sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(tx))).rows[0] ?? {},
          )[0];
        assert.equal(String(await pragma('journal_mode')), 'wal');
        // FULL's guarantee, kept by the store: SQLite itself runs NORMAL and every acknowledged commit
        // waited for an fsync of the WAL that started after the COMMIT (wal-sync.ts).
        assert.equal(Number(await pragma('synchronous')), 1);
        const wal = (store as unknown as { walSync?: { syncs: number } }).walSync;
        assert.ok(wal !== undefined, 'FULL: the store fsyncs its WAL');
        const before = wal.syncs;
        await store.transaction((tx) => sql`create table if not exists fsync_probe (x integer)`.execute(tx));
        assert.ok(wal.syncs > before, 'an acknowledged commit waited for an fsync');
        const afterOne = wal.syncs;
        // Concurrent commits: every one acknowledged after an fsync; they share fsyncs.
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => store.transaction((tx) => sql`insert into fsync_probe values (${i})`.execute(tx))),
        );
        assert.ok(wal.syncs > afterOne && wal.syncs - afterOne <= 50, `50 commits took ${wal.syncs - afterOne} fsyncs`);
        const beforeCommit = wal.syncs;
        const { value, durable } = await (store.sqlite as SqliteWriter).commit(
          (db) => db.prepare('insert into fsync_probe values (99)').run().changes,
        );
        assert.equal(value, 1);
        await durable;
        assert.ok(wal.syncs > beforeCommit, 'sqlite.commit: durable waits for an fsync');
        assert.equal(Number(await pragma('foreign_keys')), 1);
        assert.equal(Number(await pragma('busy_timeout')), 5000);
      });
      await withStore({ sqliteSynchronous: 'normal', busyTimeoutMs: 1234 }, async ({ store }) => {
        const rows = await store.transaction((tx) => sql<{ synchronous: number }>`pragma synchronous`.execute(tx));
        assert.equal(Number(rows.rows[0]?.synchronous), 1);
        assert.equal((store as unknown as { walSync?: unknown }).walSync, undefined, 'NORMAL: no fsync is awaited');
        const busy = await store.transaction((tx) => sql<{ timeout: number }>`pragma busy_timeout`.execute(tx));
        assert.equal(Number(Object.values(busy.rows[0] ?? {})[0]), 1234);
      });
    },
  );

  it('page cache: 2 GiB by default, the configured size otherwise, and a merge of the recent level leaves it as configured', async () => {
    const cacheSize = async (store: TestStore['store']): Promise<number> =>
      Number(
        Object.values((await store.transaction((tx) => sql<Record<string, unknown>>`pragma cache_size`.execute(tx))).rows[0] ?? {})[0],
      );
    await withStore({}, async ({ store }) => assert.equal(await cacheSize(store), -2048 * 1024));
    await withStore({ sqliteCacheMib: 64 }, async ({ store }) => {
      await store.migrate();
      const tenant = await addTenant(store);
      const origin = crypto.randomUUID();
      const resources = Array.from({ length: 100 }, () => crypto.randomUUID());
      await store.withTenant(tenant, async (tx) => {
        await tx
          .insertInto('agents')
          .values({
            id: origin,
            tenant_id: tenant,
            name: 'a',
            kind: 'agent',
            external_id: '',
            status: 'active',
            version: 1,
            created_at: '2026-06-02T10:00:00.000000000Z',
            updated_at: '2026-06-02T10:00:00.000000000Z',
          })
          .execute();
        await tx
          .insertInto('access_nodes')
          .values(
            resources.map((id, i) => ({
              id,
              tenant_id: tenant,
              kind: 'resource',
              ref: `r${i}`,
              name: `r${i}`,
              class: '',
              parent_id: null,
              created_at: '2026-06-02T10:00:00.000000000Z',
            })),
          )
          .execute();
      });
      // 100 edges go to the recent level; the read folds them in one merge, which once raised the
      // cache to 2 GiB for itself. The configured size bounds SQLite's memory throughout.
      await ingestObservations(
        store,
        tenant,
        resources.map((id) => ({
          origin: { kind: 'agent' as const, id: origin },
          resource: { id },
          mode: 'r' as const,
          confidence: 'high' as const,
          signal_source: 't',
        })),
      );
      assert.equal(
        await store.withTenant(
          tenant,
          async (tx) => (await sql<{ n: number }>`select count(*) as n from access_edges_recent`.execute(tx)).rows[0]?.n,
        ),
        100,
      );
      const page = await listEdges(store, tenant, { limit: 500 });
      assert.equal(page.items.length, 100);
      assert.equal(
        await store.withTenant(
          tenant,
          async (tx) => (await sql<{ n: number }>`select count(*) as n from access_edges_recent`.execute(tx)).rows[0]?.n,
        ),
        0,
        'the read merged the waiting rows',
      );
      assert.equal(await cacheSize(store), -64 * 1024);
    });
    const dir = await mkdtemp(join(tmpdir(), 'svc-cache-'));
    try {
      for (const bad of [8, 65_537, 1.5]) {
        await assert.rejects(
          openStore({ backend: 'sqlite', dataDir: join(dir, 'data'), sqliteCacheMib: bad }),
          (err: Error) =>
            err instanceof StoreError &&
            err.code === 'invalid_config' &&
            err.message === `SERVICE_SQLITE_CACHE_MIB must be an integer from 16 to 65536 (MiB), got ${bad}`,
          String(bad),
        );
      }
      // Refused before anything is created.
      assert.equal(existsSync(join(dir, 'data')), false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a read-then-write transaction waits for another process holding the write lock', async () => {
    await withStore({}, async (h) => {
      await h.store.migrate();
      const holder = runFixture('sqlite-lock-holder', [join(h.config.dataDir, SQLITE_FILE_NAME), '400']);
      const otherId = (await holder.line).split(' ')[1];
      // With a deferred BEGIN the read would take a snapshot and the write would fail at once
      // with SQLITE_BUSY; BEGIN IMMEDIATE waits (busy_timeout) for the lock, then sees the commit.
      const seen = await h.store.transaction(async (tx) => {
        const before = await tx.selectFrom('tenants').select('id').execute();
        await tx
          .insertInto('tenants')
          .values({
            id: crypto.randomUUID(),
            name: 'mine',
            region: 'eu',
            status: 'active',
            created_at: '2026-06-02T10:00:00.000000000Z',
            deleted_at: null,
          })
          .execute();
        return before.map((r) => r.id);
      });
      await holder.done;
      assert.deepEqual(seen, [otherId]);
    });
  });

  it('migrators in two processes at once apply each step exactly once', async () => {
    await withStore({}, async (h) => {
      const runs = [runFixture('sqlite-migrate', [h.config.dataDir]), runFixture('sqlite-migrate', [h.config.dataDir])];
      const results = (await Promise.all(runs.map((r) => r.done))).map((o) => JSON.parse(o) as { applied: number[]; current: number });
      const current = results[0]?.current ?? 0;
      assert.ok(current >= 1);
      assert.deepEqual(
        results.flatMap((r) => r.applied).sort((a, b) => a - b),
        SQLITE_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b),
      );
      assert.deepEqual(await h.store.readiness(), { ok: true, reachable: true, migrations: { current, expected: current } });
    });
  });

  it('group commit: concurrent transactions share one COMMIT; one that throws is rolled back alone', async () => {
    await withStore({}, async (h) => {
      await h.store.migrate();
      const file = join(h.config.dataDir, SQLITE_FILE_NAME);
      const tenant = (i: number) => ({
        id: crypto.randomUUID(),
        name: `t${i}`,
        region: 'eu',
        status: 'active' as const,
        created_at: '2026-06-02T10:00:00.000000000Z',
        deleted_at: null,
      });
      // What another connection sees: only committed rows.
      const committedTenants = async (): Promise<number> => {
        const reader = spawn(
          process.execPath,
          [
            '-e',
            `const ` +
              `D=require(${JSON.stringify(fileURLToPath(new URL('../../../../node_modules/better-sqlite3', import.meta.url)))});const ` +
              `d=new D(${JSON.stringify(file)},{readonly:true});console.log(d.prepare('select count(*) n from tenants').get().n)`,
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        );
        let out = '';
        reader.stdout.on('data', (d: Buffer) => (out += d.toString()));
        await new Promise((r) => reader.on('exit', r));
        return Number(out.trim());
      };
      const settled = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          h.store.transaction(async (tx) => {
            await tx.insertInto('tenants').values(tenant(i)).execute();
            // Every 7th member fails after its write: only its own write must disappear.
            if (i % 7 === 3) throw new Error(`member ${i} fails`);
            return i;
          }),
        ),
      );
      const failed = settled.flatMap((s, i) => (s.status === 'rejected' ? [i] : []));
      assert.deepEqual(failed, [3, 10, 17, 24, 31, 38, 45]);
      for (const i of failed) assert.match(String((settled[i] as PromiseRejectedResult).reason), new RegExp(`member ${i} fails`));
      assert.deepEqual(
        settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<number>).value),
        Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 7 !== 3),
      );
      // Visible to another connection: every fulfilled member was committed before it settled.
      assert.equal(await committedTenants(), 43);
    });
  });

  it('group commit: a member sees the writes of earlier members of its group', async () => {
    await withStore({}, async (h) => {
      await h.store.migrate();
      const id = crypto.randomUUID();
      const [, seen] = await Promise.all([
        h.store.transaction((tx) =>
          tx
            .insertInto('tenants')
            .values({ id, name: 'first', region: 'eu', status: 'active', created_at: '2026-06-02T10:00:00.000000000Z', deleted_at: null })
            .execute(),
        ),
        h.store.transaction(async (tx) => (await tx.selectFrom('tenants').select('name').where('id', '=', id).executeTakeFirst())?.name),
      ]);
      assert.equal(seen, 'first');
    });
  });
  it('sqlite.whenIdle: runs only after the writer has been idle, once per key, again while asked, never after close', async () => {
    await withStore({}, async (h) => {
      await h.store.migrate();
      const store = h.store;
      assert.ok(store.sqlite, 'the SQLite store offers idle work');
      // A writer kept busy: transactions back to back for ~60 ms; idle work waits for them.
      const busyUntil = performance.now() + 60;
      const busy = (async () => {
        while (performance.now() < busyUntil) await store.transaction(async (tx) => void (await sql`select 1`.execute(tx)));
      })();
      const runs: number[] = [];
      let calls = 0;
      // A view of the store, as gRPC ingest hands accessmap (Object.create), schedules on the store itself.
      const view = Object.create(store) as typeof store;
      view.sqlite?.whenIdle('k', 5, (db) => {
        runs.push(performance.now());
        db.prepare('select 1').get();
        return ++calls < 3; // three runs in all
      });
      store.sqlite?.whenIdle('k', 5, () => assert.fail('a second call for a pending key is a no-op'));
      await busy;
      const end = performance.now();
      const deadline = Date.now() + 5_000;
      while (calls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.equal(calls, 3);
      assert.ok((runs[0] as number) >= end, 'the first run waited for the busy writer');
      await new Promise((r) => setTimeout(r, 40));
      assert.equal(calls, 3, 'no run after fn returned false');
      // A failing run is dropped (and logged); the key can be scheduled again.
      let again = false;
      store.sqlite?.whenIdle('k', 1, () => {
        throw new Error('boom');
      });
      await new Promise((r) => setTimeout(r, 40));
      store.sqlite?.whenIdle('k', 1, () => ((again = true), false));
      await new Promise((r) => setTimeout(r, 40));
      assert.ok(again, 'scheduled again after a failure');
      // Closing drops pending work.
      let afterClose = false;
      store.sqlite?.whenIdle('late', 20, () => ((afterClose = true), false));
      await store.close();
      await new Promise((r) => setTimeout(r, 60));
      assert.equal(afterClose, false);
    });
  });
});
