/**
 * access_edges' CHECKs are checked once, on the way into the recent level (SQLite; Postgres has no
 * recent level): `appendRecent` refuses a row any CHECK would refuse, the merge runs with CHECKs
 * off, and the connection has them on again afterwards, also after a merge that failed. What lands
 * in access_edges through merges passes `PRAGMA integrity_check`, which verifies every CHECK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import {
  appendGrants,
  appendRecent,
  assertGrantable,
  assertMergeable,
  foldRecent,
  mergeOnWorker,
  waitingRows,
  type GrantRow,
  type RecentRow,
} from '../../../src/modules/accessmap/recent-edges.js';
import { newId } from '../../../src/store/ids.js';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

const AT = '2026-11-26T10:00:00.123456789Z';

function goodRow(tenant: string): RecentRow {
  return {
    id: newId(),
    tenant_id: tenant,
    origin_kind: 'identity',
    origin_id: newId(),
    origin_no: 1,
    resource_id: newId(),
    resource_no: 2,
    mode: 'r',
    observed_count: 1,
    first_seen: AT,
    last_seen: AT,
    confidence: 'high',
    signal_source: 's',
    recorded_at: AT,
  };
}

/** One change per CHECK of access_edges (SQLite migration 5) that the row must not get past. */
const BAD: Array<[string, Partial<Record<keyof RecentRow, unknown>>]> = [
  ['uppercase id', { id: 'ABCDEF00-0000-7000-8000-000000000000' }],
  ['id without dashes', { id: 'abcdef0000007000800000000000000000' }],
  ['tenant not a uuid', { tenant_id: 'tenant-1' }],
  ['origin kind', { origin_kind: 'agents' }],
  ['origin id', { origin_id: '00000000-0000-0000-0000-00000000000' }],
  ['resource id', { resource_id: 'g0000000-0000-0000-0000-000000000000' }],
  ['mode', { mode: 'w' }],
  ['count 0', { observed_count: 0 }],
  ['count not an integer', { observed_count: 1.5 }],
  ['first_seen with 8 digits', { first_seen: '2026-11-26T10:00:00.12345678Z' }],
  ['last_seen with a space', { last_seen: '2026-11-26 10:00:00.123456789Z' }],
  ['recorded_at lowercase z', { recorded_at: '2026-11-26T10:00:00.123456789z' }],
  ['confidence empty', { confidence: '' }],
  ['origin number missing', { origin_no: null }],
  ['resource number a string', { resource_no: '2' }],
  ['signal source not text', { signal_source: 7 }],
];

function goodGrant(tenant: string): GrantRow {
  return {
    id: newId(),
    tenant_id: tenant,
    origin_kind: 'identity',
    origin_id: newId(),
    origin_no: 1,
    resource_id: newId(),
    resource_no: 2,
    mode: 'r',
    source: 'iam',
    recorded_at: AT,
  };
}

/** The changes of {@link BAD} that a grant row has fields for. */
const BAD_GRANT: Array<[string, Partial<Record<keyof GrantRow, unknown>>]> = [
  ...BAD.filter(([, change]) => Object.keys(change).every((k) => k in goodGrant('00000000-0000-7000-8000-000000000000'))),
  ['source not text', { source: null }],
];

describe('sqlite: access_edges CHECKs are checked on the way into the recent level, once', () => {
  let h: TestStore;
  before(async () => {
    h = await createSqliteTestStore();
    await h.store.migrate();
  });
  after(async () => h?.dispose());

  const integrity = async (): Promise<string[]> =>
    (await h.admin.query<{ integrity_check: string }>('pragma integrity_check')).map((r) => r.integrity_check);

  /** Writes one edge straight into access_edges through the store's own connection; `bad` breaks one CHECK. */
  const directInsert = (tenant: string, bad: { first_seen?: string; confidence?: string }): Promise<void> =>
    h.store.withTenant(tenant, async (tx) => {
      const db = h.store.sqlite?.handle(tx);
      assert.ok(db);
      db.prepare(
        `insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, observed_count, ` +
          `first_seen, last_seen, confidence, signal_source, created_at, updated_at)
        values (?, ?, 'identity', ?, ?, ?, ?, 'r', 1, ?, ?, ?, 's', ?, ?)`,
      ).run(
        newId(),
        tenant,
        newId(),
        990_000 + Math.floor(Math.random() * 9_000),
        newId(),
        999_000 + Math.floor(Math.random() * 900),
        bad.first_seen ?? AT,
        AT,
        bad.confidence ?? 'high',
        AT,
        AT,
      );
    });

  it('refuses, appending nothing, a batch with one row any CHECK would refuse', async () => {
    const tenant = await addTenant(h.store);
    assert.doesNotThrow(() => assertMergeable(goodRow(tenant)));
    for (const [what, change] of BAD) {
      await h.store.withTenant(tenant, async (tx) => {
        const db = h.store.sqlite?.handle(tx);
        assert.ok(db);
        const before = waitingRows(db);
        const rows = [goodRow(tenant), { ...goodRow(tenant), ...change } as RecentRow, goodRow(tenant)];
        assert.throws(() => appendRecent(db, rows), /refusing a row that access_edges' CHECKs would refuse/, what);
        assert.equal(waitingRows(db), before, `${what}: nothing of the batch appended`);
      });
    }
  });

  it('refuses, appending nothing, a batch of grants with one row any CHECK would refuse', async () => {
    const tenant = await addTenant(h.store);
    assert.doesNotThrow(() => assertGrantable(goodGrant(tenant)));
    assert.equal(BAD_GRANT.length, 11, 'ids, kinds, numbers, mode, timestamp and source are all tried');
    for (const [what, change] of BAD_GRANT) {
      await h.store.withTenant(tenant, async (tx) => {
        const db = h.store.sqlite?.handle(tx);
        assert.ok(db);
        const before = waitingRows(db);
        const rows = [goodGrant(tenant), { ...goodGrant(tenant), ...change } as GrantRow, goodGrant(tenant)];
        assert.throws(() => appendGrants(db, rows), /refusing a grant that access_edges' CHECKs would refuse/, what);
        assert.equal(waitingRows(db), before, `${what}: nothing of the batch appended`);
      });
    }
  });

  it(
    'merged observations of every kind, mode, confidence and repeat pass integrity_check, and CHECKs are on again after the merge',
    async () => {
      const tenant = await addTenant(h.store);
      const agent = (await createAgent(h.store, tenant, { name: 'checked' })).id;
      const kinds: Array<Observation['origin']> = [
        { kind: 'agent', id: agent },
        { kind: 'session', ref: 'sess-1', parent_id: agent },
        { kind: 'identity', ref: 'id-1' },
      ];
      // Two rounds over the same accesses: the second meets the first in the merge (ON CONFLICT DO UPDATE).
      for (let round = 0; round < 2; round++) {
        const batch: Observation[] = Array.from({ length: 300 }, (_, i) => ({
          origin: kinds[i % 3] as Observation['origin'],
          resource: { ref: `res-${i % 100}` },
          mode: i % 2 === 0 ? 'r' : 'rw',
          confidence: (['high', 'medium', 'low'] as const)[i % 3] as Observation['confidence'],
          signal_source: `src-${round}`,
          observed_at: `2026-11-2${round}T10:00:00.00000000${i % 10}Z`,
          count: 1 + (i % 4),
        }));
        await ingestObservations(h.store, tenant, batch);
      }
      const waiting = await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent');
      assert.ok(Number(waiting[0]?.n) > 0, 'the batches waited in the recent level');
      await foldRecent(h.store);
      const merged = await h.admin.query<{ n: number; c: number }>(
        'select count(*) as n, sum(observed_count) as c from access_edges where tenant_id = ?',
        [tenant],
      );
      assert.ok(Number(merged[0]?.n) > 100, 'merged into access_edges');
      assert.deepEqual(await integrity(), ['ok']);
      // The writer connection checks again: a bad row written through it is refused.
      await assert.rejects(directInsert(tenant, { first_seen: 'yesterday' }), /CHECK constraint failed/);
    },
  );

  it(
    'after a merge that fails, CHECKs are on again; a row put in the level around appendRecent is merged unchecked and integrity_check ' +
      'names it',
    async () => {
      const tenant = await addTenant(h.store);
      const cols =
        'id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, observed_count, first_seen, last_seen, ' +
        'confidence, signal_source, recorded_at';
      // A row whose edge id an edge of the tenant already has: the merge's unique (tenant_id, id) refuses it, so the merge throws.
      await ingestObservations(h.store, tenant, [
        {
          origin: { kind: 'identity', ref: 'dup-id' },
          resource: { ref: 'dup-res' },
          mode: 'r',
          confidence: 'high',
          signal_source: 's',
          observed_at: AT,
        },
      ]);
      await foldRecent(h.store);
      const [taken] = await h.admin.query<{ id: string }>('select id from access_edges where tenant_id = ?', [tenant]);
      assert.ok(taken);
      await h.admin.query(
        `insert into access_edges_recent (${cols}) values (?, ?, 'identity', ?, 999101, ?, 999102, 'r', 1, ?, ?, 'high', 's', ?)`,
        [taken.id, tenant, newId(), newId(), AT, AT, AT],
      );
      await assert.rejects(mergeOnWorker(h.store), /UNIQUE constraint failed/);
      await assert.rejects(
        directInsert(tenant, { confidence: 'bold' }),
        /CHECK constraint failed/,
        'CHECKs are on again after the failed merge',
      );
      await h.admin.query('delete from access_edges_recent');
      assert.deepEqual(await integrity(), ['ok']);
      // Written by hand around appendRecent (the service never does): the merge does not check it.
      await h.admin.query(
        `insert into access_edges_recent (${cols}) values (?, ?, 'identity', ?, 999201, ?, 999202, 'r', 1, 'last tuesday', ?, 'high', ` +
          `'s', ?)`,
        [newId(), tenant, newId(), newId(), AT, AT],
      );
      await foldRecent(h.store);
      const report = await integrity();
      assert.ok(
        report.some((line) => /CHECK constraint failed in access_edges/.test(line)),
        `integrity_check reports it: ${report.join('; ')}`,
      );
    },
  );
});
