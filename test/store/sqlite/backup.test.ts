import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { backupSqliteDataDir } from '../../../src/store/sqlite/backup.js';
import { openStore } from '../../../src/store/store.js';
import { addTenant } from '../store-fixtures.js';
import { jsonOut, runSvc } from '../../cli/harness.js';
import { readAllEdges } from '../../helpers/accessmap.js';

// Merges on the worker while the backup runs (read once per process; node --test runs each file in its own).
process.env['SERVICE_ACCESSMAP_MERGE_ROWS'] = '1000';

const AT = '2026-06-01T10:00:00.000000000Z';
const PER_BATCH = 400;

function dirs(): { data: string; dest: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'svc-backup-'));
  return { data: join(root, 'data'), dest: join(root, 'backup'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

describe('sqlite: svc backup copies both files as of one instant', () => {
  // `svc backup` runs in a process of its own, as beside `svc serve`: this process's store keeps
  // committing while the command waits for svc.db's lock (in one thread, a synchronous wait for a
  // lock the same thread's open transaction holds could only time out).
  it(
    'svc backup while four streams ingest and the worker merges: the copy opens, holds whole batches only, and every edge names nodes ' +
      'the copy has',
    async () => {
      const d = dirs();
      const store = await openStore({ backend: 'sqlite', dataDir: d.data });
      try {
        await store.migrate();
        const tenant = await addTenant(store);
        let acked = 0;
        let stop = false;
        // Every batch names resources no earlier batch did: its nodes are created in the same commit as its edges.
        const streams = Array.from({ length: 4 }, async (_, s) => {
          for (let round = 0; !stop || round < 3; round++) {
            const batch: Observation[] = Array.from({ length: PER_BATCH }, (_, i) => ({
              origin: { kind: 'identity', ref: `id-${s}-${i % 7}` },
              resource: { ref: `r-${s}-${round}-${i}` },
              mode: 'r',
              confidence: 'high',
              signal_source: 'bk',
              observed_at: AT,
            }));
            await ingestObservations(store, tenant, batch);
            acked += PER_BATCH;
          }
        });
        while (acked < 8 * PER_BATCH * 4) await new Promise((r) => setTimeout(r, 5));
        const before = acked;
        const run = await runSvc(['backup', '--data-dir', d.data, d.dest, '-o', 'json'], { timeoutMs: 60_000 });
        const after = acked;
        assert.equal(run.code, 0, run.stderr);
        const r = jsonOut(run) as { lock_ms: number; dir: string; files: Array<{ file: string }> };
        assert.equal(r.dir, d.dest);
        assert.ok(
          ['svc.db', 'svc-edges.db'].every((f) => r.files.some((x) => x.file === join(d.dest, f))),
          'both files listed',
        );
        stop = true;
        await Promise.all(streams);
        assert.ok(r.lock_ms < 2_000, `svc.db held ${r.lock_ms} ms`);
        for (const f of ['svc.db', 'svc-edges.db']) assert.equal(statSync(join(d.dest, f)).mode & 0o777, 0o600, `${f} is 0600`);
        assert.equal(statSync(d.dest).mode & 0o777, 0o700);

        const copy = await openStore({ backend: 'sqlite', dataDir: d.dest });
        try {
          await copy.migrate();
          const edges = await readAllEdges(copy, tenant);
          const observed = edges.reduce((n, e) => n + e.observed_count, 0);
          assert.equal(observed % PER_BATCH, 0, `whole batches only (${observed} observations)`);
          assert.ok(
            observed >= before && observed <= after,
            `${observed} observations: at least the ${before} acked before the backup began, at most the ${after} acked by its end`,
          );
          assert.equal(edges.length, observed, 'each observation once (one edge per access here)');
          // The instant: the edge file holds nothing the svc.db copy does not know.
          const db = new BetterSqlite3(join(d.dest, 'svc.db'), { readonly: true });
          try {
            const nodes = new Set(
              (db.prepare('select id from access_nodes where tenant_id = ?').all(tenant) as Array<{ id: string }>).map((n) => n.id),
            );
            const missing = edges.filter((e) => !nodes.has(e.origin_id) || !nodes.has(e.resource_id));
            assert.equal(missing.length, 0, `${missing.length} edges name nodes the svc.db copy lacks`);
            assert.equal(nodes.size, 4 * 7 + observed, 'no node without its batch');
          } finally {
            db.close();
          }
          for (const f of ['svc.db', 'svc-edges.db']) {
            const check = new BetterSqlite3(join(d.dest, f), { readonly: true });
            assert.deepEqual(check.pragma('integrity_check', { simple: true }), 'ok');
            check.close();
          }
        } finally {
          await copy.close();
        }
      } finally {
        await store.close();
        d.cleanup();
      }
    },
  );

  it('refuses a destination that holds a database, and a directory with no store; leaves nothing half-written', async () => {
    const d = dirs();
    try {
      await assert.rejects(
        backupSqliteDataDir(d.data, d.dest),
        (err: Error & { code?: string }) => err.code === 'invalid_config' && /does not exist/.test(err.message),
      );
      assert.equal(existsSync(join(d.dest, 'svc.db')), false);
      const store = await openStore({ backend: 'sqlite', dataDir: d.data });
      await store.migrate();
      await addTenant(store);
      await store.close();
      // The signing keys and the TLS certificate travel with the database, modes kept.
      mkdirSync(join(d.data, 'audit-keys'), { mode: 0o700 });
      writeFileSync(join(d.data, 'audit-keys', 'k.pem'), 'secret', { mode: 0o600 });
      const r = await backupSqliteDataDir(d.data, d.dest);
      assert.equal(readFileSync(join(d.dest, 'audit-keys', 'k.pem'), 'utf8'), 'secret');
      assert.equal(statSync(join(d.dest, 'audit-keys', 'k.pem')).mode & 0o777, 0o600);
      assert.equal(statSync(join(d.dest, 'audit-keys')).mode & 0o777, 0o700);
      assert.ok(r.files.some((f) => f.file === join(d.dest, 'audit-keys', 'k.pem')));
      const first = readFileSync(join(d.dest, 'svc.db'));
      await assert.rejects(
        backupSqliteDataDir(d.data, d.dest),
        (err: Error & { code?: string }) => err.code === 'invalid_config' && /refusing to overwrite/.test(err.message),
      );
      const again = await runSvc(['backup', '--data-dir', d.data, d.dest]);
      assert.equal(again.code, 1, 'the command exits 1');
      assert.match(again.stderr, /refusing to overwrite/);
      assert.deepEqual(readFileSync(join(d.dest, 'svc.db')), first, 'the earlier backup is untouched');
      // Another writer holding svc.db past the timeout: a clear error, nothing copied, nothing left behind.
      const busyDest = join(d.dest, 'busy');
      const holder = new BetterSqlite3(join(d.data, 'svc.db'));
      holder.exec('begin immediate');
      try {
        await assert.rejects(
          backupSqliteDataDir(d.data, busyDest, { busyTimeoutMs: 200 }),
          (err: Error & { code?: string }) => err.code === 'busy' && /held the database for 200 ms/.test(err.message),
        );
      } finally {
        holder.exec('rollback');
        holder.close();
      }
      assert.deepEqual(existsSync(busyDest) ? readdirSync(busyDest) : [], [], 'no file left in the destination');
      // An edge file from elsewhere: refused, and the destination stays empty.
      const other = dirs();
      try {
        const s2 = await openStore({ backend: 'sqlite', dataDir: other.data });
        await s2.migrate();
        await s2.close();
        writeFileSync(join(d.data, 'svc-edges.db'), readFileSync(join(other.data, 'svc-edges.db')));
        rmSync(join(d.data, 'svc-edges.db-wal'), { force: true });
        rmSync(join(d.data, 'svc-edges.db-shm'), { force: true });
        await assert.rejects(backupSqliteDataDir(d.data, other.dest), /belongs to another database/);
        assert.equal(existsSync(join(other.dest, 'svc.db')), false, 'nothing half-written left behind');
      } finally {
        other.cleanup();
      }
    } finally {
      d.cleanup();
    }
  });
});
