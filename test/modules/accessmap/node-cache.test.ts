/**
 * SQLite ingest keeps the nodes it has resolved in memory (src/modules/accessmap/node-cache.ts).
 * A lookup through the cache must answer exactly what the database holds at that moment, whoever
 * wrote it and however the write ended: committed, rolled back (whole or to its savepoint in a
 * group commit), or written by another connection to the file (a delete, a new natural key, a new
 * external id). A random sequence of those writes is checked after every step against the same
 * lookups made in SQL, and the cache is shown to answer from memory (so the comparison is not
 * trivially the database's own).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { newId } from '../../../src/core/agents/ids.js';
import { nodeCacheFromEnv, nodeFacts } from '../../../src/modules/accessmap/node-cache.js';
import { agentsByExternalId, agentsById, nodesById, nodesByRef } from '../../../src/modules/accessmap/node-lookup.js';
import { resolveNodes } from '../../../src/modules/accessmap/node-store.js';
import { ingestObservations } from '../../../src/modules/accessmap/edge-store.js';
import type { SqliteHandle, Store } from '../../../src/store/store.js';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { addTenant, agentRow } from '../../store/store-fixtures.js';

type Tx = Parameters<Parameters<Store['withTenant']>[1]>[0];
const KINDS = ['session', 'identity', 'resource'] as const;
type Kind = (typeof KINDS)[number];

/** Everything a test has ever named: ids and refs, live or not. */
interface Names {
  nodeIds: Set<string>;
  refs: Map<Kind, Set<string>>;
  agentIds: Set<string>;
  externals: Set<string>;
}

const sorted = <T>(rows: T[], key: (r: T) => string): string[] => rows.map(key).sort();

/** The four lookups through the cache, and the same four in SQL on the same connection (no cache), inside one transaction. */
async function both(store: Store, tx: Tx, tenant: string, n: Names): Promise<{ cached: string[][]; truth: string[][] }> {
  const db = store.sqliteHandle?.(tx) as SqliteHandle;
  const ids = [...n.nodeIds];
  const cached: string[][] = [sorted(await nodesById(tx, db, tenant, ids), (r) => `${r.id}:${r.kind}`)];
  const truth: string[][] = [sorted((await tx.selectFrom('access_nodes').select(['id', 'kind']).where('tenant_id', '=', tenant).execute()).filter((r) => n.nodeIds.has(r.id)), (r) => `${r.id}:${r.kind}`)];
  for (const kind of KINDS) {
    const refs = [...(n.refs.get(kind) ?? [])];
    cached.push(sorted(await nodesByRef(tx, db, tenant, kind, refs), (r) => `${r.ref}:${r.id}`));
    truth.push(sorted((await tx.selectFrom('access_nodes').select(['id', 'ref']).where('tenant_id', '=', tenant).where('kind', '=', kind).execute()).filter((r) => refs.includes(r.ref)), (r) => `${r.ref}:${r.id}`));
  }
  cached.push(sorted(await agentsById(tx, db, tenant, [...n.agentIds]), (r) => r.id));
  truth.push(sorted((await tx.selectFrom('agents').select('id').where('tenant_id', '=', tenant).execute()).filter((r) => n.agentIds.has(r.id)), (r) => r.id));
  cached.push(sorted(await agentsByExternalId(tx, db, tenant, [...n.externals]), (r) => `${r.external_id}:${r.id}`));
  truth.push(sorted((await tx.selectFrom('agents').select(['id', 'external_id']).where('tenant_id', '=', tenant).execute()).filter((r) => n.externals.has(r.external_id)), (r) => `${r.external_id}:${r.id}`));
  return { cached, truth };
}

async function check(store: Store, tenant: string, n: Names, why: string): Promise<void> {
  const { cached, truth } = await store.withTenant(tenant, (tx) => both(store, tx, tenant, n));
  assert.deepEqual(cached, truth, why);
}

type Op =
  | { op: 'create'; kind: Kind; ref: number }
  | { op: 'agent'; ext: number }
  | { op: 'rolled-back-create'; kind: Kind; ref: number; then: boolean }
  | { op: 'rolled-back-agent-delete'; pick: number }
  | { op: 'group'; kind: Kind; ref: number; failing: number }
  | { op: 'delete'; pick: number; other: boolean }
  | { op: 'agent-delete'; pick: number; other: boolean }
  | { op: 'new-ref'; pick: number; ref: number }
  | { op: 'new-kind'; pick: number; kind: Kind }
  | { op: 'new-external'; pick: number; ext: number; other: boolean };

const ref = fc.nat({ max: 12 });
const arbitraryOp: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), kind: fc.constantFrom(...KINDS), ref }),
  fc.record({ op: fc.constant('agent' as const), ext: ref }),
  fc.record({ op: fc.constant('rolled-back-create' as const), kind: fc.constantFrom(...KINDS), ref, then: fc.boolean() }),
  fc.record({ op: fc.constant('rolled-back-agent-delete' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('group' as const), kind: fc.constantFrom(...KINDS), ref, failing: ref }),
  fc.record({ op: fc.constant('delete' as const), pick: fc.nat(), other: fc.boolean() }),
  fc.record({ op: fc.constant('agent-delete' as const), pick: fc.nat(), other: fc.boolean() }),
  fc.record({ op: fc.constant('new-ref' as const), pick: fc.nat(), ref }),
  fc.record({ op: fc.constant('new-kind' as const), pick: fc.nat(), kind: fc.constantFrom(...KINDS) }),
  fc.record({ op: fc.constant('new-external' as const), pick: fc.nat(), ext: ref, other: fc.boolean() }),
);

describe('sqlite: the node cache answers what the database holds', () => {
  let h: TestStore;
  before(async () => {
    h = await createSqliteTestStore();
    await h.store.migrate();
  });
  after(async () => h?.dispose());

  it('after commits, rollbacks, group commits and another connection’s deletes and renames (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbitraryOp, { minLength: 1, maxLength: 25 }), async (ops) => {
        const store = h.store;
        const tenant = await addTenant(store);
        const n: Names = { nodeIds: new Set(), refs: new Map(KINDS.map((k) => [k, new Set<string>()])), agentIds: new Set(), externals: new Set() };
        const live = async (table: 'access_nodes' | 'agents'): Promise<string[]> => (await h.admin.query<{ id: string }>(`select id from ${table} where tenant_id = ? order by id`, [tenant])).map((r) => r.id);
        const pick = async (table: 'access_nodes' | 'agents', i: number): Promise<string | undefined> => {
          const ids = await live(table);
          return ids[i % Math.max(1, ids.length)];
        };
        /** Creates (or finds) a node by natural key through the ingest path, inside `tx`. */
        const create = async (tx: Tx, kind: Kind, r: string): Promise<string> => {
          const [id] = await resolveNodes(tx, tenant, kind, [{ ref: r }], store.sqliteHandle?.(tx));
          n.refs.get(kind)?.add(r);
          n.nodeIds.add(id as string);
          return id as string;
        };
        const rollback = (fn: (tx: Tx) => Promise<void>) =>
          store
            .withTenant(tenant, async (tx) => {
              await fn(tx);
              throw new Error('roll back');
            })
            .then(
              () => assert.fail('the transaction should have failed'),
              (err: Error) => assert.equal(err.message, 'roll back'),
            );
        for (const o of ops) {
          if (o.op === 'create') {
            await store.withTenant(tenant, (tx) => create(tx, o.kind, `${o.kind}-${o.ref}`));
          } else if (o.op === 'agent') {
            const row = agentRow(tenant, { external_id: `ext-${o.ext}` });
            if ((await h.admin.query('select 1 from agents where tenant_id = ? and external_id = ?', [tenant, row.external_id])).length > 0) continue;
            await store.withTenant(tenant, (tx) => tx.insertInto('agents').values(row).execute());
            n.agentIds.add(row.id);
            n.externals.add(row.external_id);
          } else if (o.op === 'rolled-back-create') {
            // Created and looked up inside a transaction that fails: what the cache learnt there must go.
            const r = `${o.kind}-rb-${o.ref}`;
            await rollback(async (tx) => {
              const id = await create(tx, o.kind, r);
              const { cached, truth } = await both(store, tx, tenant, n);
              assert.deepEqual(cached, truth, 'inside the transaction that wrote it');
              assert.ok(cached.flat().some((x) => x.startsWith(`${id}:`)), 'the node is visible to its own transaction');
            });
            // A next write before any lookup must not hide the rollback.
            if (o.then) await store.withTenant(tenant, (tx) => create(tx, o.kind, `${o.kind}-after-${o.ref}`));
          } else if (o.op === 'rolled-back-agent-delete') {
            const id = await pick('agents', o.pick);
            if (id === undefined) continue;
            await rollback(async (tx) => {
              await tx.deleteFrom('agents').where('id', '=', id).execute();
              const { cached, truth } = await both(store, tx, tenant, n);
              assert.deepEqual(cached, truth, 'inside the transaction that deleted it');
            });
          } else if (o.op === 'group') {
            // Two members of one group commit: the first keeps its node, the second is rolled back to its savepoint.
            const keep = store.withTenant(tenant, (tx) => create(tx, o.kind, `${o.kind}-${o.ref}`));
            const fail = store.withTenant(tenant, async (tx) => {
              await create(tx, o.kind, `${o.kind}-fail-${o.failing}`);
              await both(store, tx, tenant, n);
              throw new Error('roll back');
            });
            const [kept, failed] = await Promise.allSettled([keep, fail]);
            assert.equal(kept.status, 'fulfilled');
            assert.equal(failed.status, 'rejected');
          } else if (o.op === 'delete') {
            const id = await pick('access_nodes', o.pick);
            if (id === undefined) continue;
            if (o.other) await h.admin.query('delete from access_nodes where id = ?', [id]);
            else await store.withTenant(tenant, (tx) => tx.deleteFrom('access_nodes').where('id', '=', id).execute());
          } else if (o.op === 'agent-delete') {
            const id = await pick('agents', o.pick);
            if (id === undefined) continue;
            if (o.other) await h.admin.query('delete from agents where id = ?', [id]);
            else await store.withTenant(tenant, (tx) => tx.deleteFrom('agents').where('id', '=', id).execute());
          } else if (o.op === 'new-ref') {
            const id = await pick('access_nodes', o.pick);
            if (id === undefined) continue;
            const [row] = await h.admin.query<{ kind: Kind }>('select kind from access_nodes where id = ?', [id]);
            const r = `moved-${o.ref}`;
            if ((await h.admin.query('select 1 from access_nodes where tenant_id = ? and kind = ? and ref = ?', [tenant, row?.kind, r])).length > 0) continue;
            await h.admin.query('update access_nodes set ref = ? where id = ?', [r, id]);
            n.refs.get(row?.kind as Kind)?.add(r);
          } else if (o.op === 'new-kind') {
            const id = await pick('access_nodes', o.pick);
            if (id === undefined) continue;
            const [row] = await h.admin.query<{ ref: string }>('select ref from access_nodes where id = ?', [id]);
            if ((await h.admin.query('select 1 from access_nodes where tenant_id = ? and kind = ? and ref = ?', [tenant, o.kind, row?.ref])).length > 0) continue;
            await h.admin.query('update access_nodes set kind = ? where id = ?', [o.kind, id]);
            n.refs.get(o.kind)?.add(row?.ref as string);
          } else {
            const id = await pick('agents', o.pick);
            if (id === undefined) continue;
            const ext = `ext-${o.ext}`;
            if ((await h.admin.query('select 1 from agents where tenant_id = ? and external_id = ?', [tenant, ext])).length > 0) continue;
            if (o.other) await h.admin.query('update agents set external_id = ? where id = ?', [ext, id]);
            else await store.withTenant(tenant, (tx) => tx.updateTable('agents').set({ external_id: ext }).where('id', '=', id).execute());
            n.externals.add(ext);
          }
          await check(store, tenant, n, `after ${JSON.stringify(o)}`);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('answers from memory: a node deleted behind the triggers’ back is still found, which is what the change log prevents', async () => {
    // A store of its own: this test drops a trigger.
    const own = await createSqliteTestStore();
    try {
      await own.store.migrate();
      const store = own.store;
      const tenant = await addTenant(store);
      const lookup = () => store.withTenant(tenant, async (tx) => (await nodesByRef(tx, store.sqliteHandle?.(tx), tenant, 'resource', ['s3://bucket/a'])).map((r) => r.id));
      const [id] = await store.withTenant(tenant, (tx) => resolveNodes(tx, tenant, 'resource', [{ ref: 's3://bucket/a' }], store.sqliteHandle?.(tx)));
      assert.deepEqual(await lookup(), [id]);
      await own.admin.query('delete from access_nodes where id = ?', [id]);
      assert.deepEqual(await lookup(), [], 'with the trigger, the delete reaches the cache');
      const [again] = await store.withTenant(tenant, (tx) => resolveNodes(tx, tenant, 'resource', [{ ref: 's3://bucket/a' }], store.sqliteHandle?.(tx)));
      assert.notEqual(again, id, 'a new node for the same natural key');
      await own.admin.query('drop trigger access_nodes_cache_delete');
      await own.admin.query('delete from access_nodes where id = ?', [again]);
      assert.deepEqual(await lookup(), [again], 'without it the cache still answers the deleted node: lookups are served from memory');
    } finally {
      await own.dispose();
    }
  });

  it('ingest fills it: a second batch over the same nodes finds them all in memory', async () => {
    const store = h.store;
    const tenant = await addTenant(store);
    const agent = agentRow(tenant, { external_id: 'runner-1' });
    await store.withTenant(tenant, (tx) => tx.insertInto('agents').values(agent).execute());
    const batch = Array.from({ length: 50 }, (_, i) => ({
      origin: i % 2 === 0 ? { kind: 'agent' as const, id: agent.id } : { kind: 'agent' as const, ref: 'runner-1' },
      resource: { ref: `file:///srv/${i}` },
      mode: 'r' as const,
      confidence: 'high' as const,
      signal_source: 'test',
    }));
    await ingestObservations(store, tenant, batch);
    const facts = await store.withTenant(tenant, async (tx) => nodeFacts(store.sqliteHandle?.(tx) as SqliteHandle, tenant));
    assert.ok(facts);
    assert.equal(facts.refs.size, 50, 'the resources it created');
    assert.ok(facts.agents.has(agent.id));
    assert.equal(facts.externals.get('runner-1'), agent.id);
    const again = await ingestObservations(store, tenant, batch);
    assert.deepEqual(again, { accepted: 50, edges: 50 });
    const { n } = (await h.admin.query<{ n: number }>('select count(*) as n from access_nodes where tenant_id = ?', [tenant]))[0] as { n: number };
    assert.equal(n, 50, 'no node created twice');
  });
});

describe('SERVICE_ACCESSMAP_NODE_CACHE', () => {
  it('defaults to 1,000,000, takes 0 (off) to 100,000,000, and refuses anything else', () => {
    assert.equal(nodeCacheFromEnv({}), 1_000_000);
    assert.equal(nodeCacheFromEnv({ SERVICE_ACCESSMAP_NODE_CACHE: '0' }), 0);
    assert.equal(nodeCacheFromEnv({ SERVICE_ACCESSMAP_NODE_CACHE: '100000000' }), 100_000_000);
    for (const bad of ['-1', '1.5', 'lots', '100000001', '1e9']) assert.throws(() => nodeCacheFromEnv({ SERVICE_ACCESSMAP_NODE_CACHE: bad }), /SERVICE_ACCESSMAP_NODE_CACHE must be an integer from 0 to 100000000/);
  });
});
