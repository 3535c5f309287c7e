import { recordHooks } from '../../../src/routes.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAgent, deleteAgent, patchAgent } from '../../../src/core/agents/agent-service.js';
import { afterIngestCommit, ingestInTransaction, ingestObservations, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { createSqliteTestStore, selectedBackends, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

// The writer's node cache (node-cache.ts, migration 18): ingest answers node lookups from memory
// once a batch that resolved them has committed, and never answers from it what the database
// would no longer say.

const skip = selectedBackends().has('sqlite') ? false : `SVC_TEST_STORES=${process.env['SVC_TEST_STORES']} excludes sqlite`;
const AT = '2026-06-01T10:00:00.000000000Z';

const seen = (origin: Observation['origin'], resource: Observation['resource']): Observation => ({
  origin,
  resource,
  mode: 'r',
  confidence: 'high',
  signal_source: 'test',
  observed_at: AT,
});

async function withStore(fn: (h: TestStore, tenant: string) => Promise<void>): Promise<void> {
  const h = await createSqliteTestStore();
  try {
    await h.store.migrate();
    await fn(h, await addTenant(h.store));
  } finally {
    await h.dispose();
  }
}

/** Ingest of `obs` fails with the service's not-found error naming `what`. */
async function refused(h: TestStore, tenant: string, obs: Observation[], what: RegExp): Promise<void> {
  await assert.rejects(
    ingestObservations(h.store, tenant, obs),
    (err: Error & { code?: string }) => err.code === 'not_found' && what.test(err.message),
  );
}

describe('sqlite: the node cache of ingest', { skip }, () => {
  it('answers from memory once a batch that resolved the nodes has committed (a delete that skips the counter is not seen)', async () => {
    await withStore(async (h, tenant) => {
      const agent = await createAgent(h.store, tenant, { name: 'a' });
      await ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: agent.id }, { ref: 'res-1' })]);
      const [res] = await h.admin.query<{ id: string }>("select id from access_nodes where ref = 'res-1'");
      // Behind the cache's back: the triggers that move the counter dropped, the rows deleted from
      // another connection. Only answers held in memory can still resolve these ids.
      for (const t of ['agents_epoch_delete', 'access_nodes_epoch_delete']) await h.admin.query(`drop trigger ${t}`);
      await h.admin.query('pragma foreign_keys = off');
      await h.admin.query('delete from access_nodes where id = ?', [res?.id]);
      await h.admin.query('delete from agents where id = ?', [agent.id]);
      const out = await ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: agent.id }, { id: res?.id as string })]);
      assert.equal(out.accepted, 1, 'both ends resolved from memory');
    });
  });

  it('forgets an agent deleted through the service, and one deleted by another connection', async () => {
    await withStore(async (h, tenant) => {
      const a = await createAgent(h.store, tenant, { name: 'a' });
      const b = await createAgent(h.store, tenant, { name: 'b' });
      await ingestObservations(h.store, tenant, [
        seen({ kind: 'agent', id: a.id }, { ref: 'r1' }),
        seen({ kind: 'agent', id: b.id }, { ref: 'r2' }),
      ]);
      await deleteAgent(h.store, recordHooks(), tenant, a.id);
      await refused(h, tenant, [seen({ kind: 'agent', id: a.id }, { ref: 'r1' })], new RegExp(a.id));
      // Another writer on the file (a second process, an operator's sqlite3): the trigger counts it too.
      await ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: b.id }, { ref: 'r2' })]);
      await h.admin.query('delete from agents where id = ?', [b.id]);
      await refused(h, tenant, [seen({ kind: 'agent', id: b.id }, { ref: 'r2' })], new RegExp(b.id));
    });
  });

  it('forgets a resource deleted by another connection, and an external id changed by PATCH', async () => {
    await withStore(async (h, tenant) => {
      const a = await createAgent(h.store, tenant, { name: 'a', external_id: 'ext-old' });
      await ingestObservations(h.store, tenant, [seen({ kind: 'agent', ref: 'ext-old' }, { ref: 'doomed' })]);
      const [res] = await h.admin.query<{ id: string }>("select id from access_nodes where ref = 'doomed'");
      await h.admin.query('delete from access_nodes where id = ?', [res?.id]);
      await refused(h, tenant, [seen({ kind: 'agent', id: a.id }, { id: res?.id as string })], /resource/);
      await patchAgent(h.store, tenant, a.id, { version: a.version, external_id: 'ext-new' });
      await refused(h, tenant, [seen({ kind: 'agent', ref: 'ext-old' }, { ref: 'r' })], /ext-old/);
      assert.equal((await ingestObservations(h.store, tenant, [seen({ kind: 'agent', ref: 'ext-new' }, { ref: 'r' })])).accepted, 1);
    });
  });

  it('keeps nothing from a batch that did not commit: a node it created and rolled back is created again', async () => {
    await withStore(async (h, tenant) => {
      const a = await createAgent(h.store, tenant, { name: 'a' });
      // The second observation is refused after both ends were resolved and `ghost` was created.
      const bad = { ...seen({ kind: 'agent', id: a.id }, { ref: 'ghost' }), count: 0 };
      await assert.rejects(ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: a.id }, { ref: 'ghost' }), bad]), /count/);
      assert.equal((await h.admin.query("select id from access_nodes where ref = 'ghost'")).length, 0, 'rolled back');
      await ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: a.id }, { ref: 'ghost' })]);
      const nodes = await h.admin.query<{ id: string }>("select id from access_nodes where ref = 'ghost'");
      assert.equal(nodes.length, 1);
      const edges = await listEdges(h.store, tenant, { limit: 10 });
      assert.deepEqual(
        edges.items.map((e) => e.resource_id),
        [nodes[0]?.id],
        'the edge names the node that exists',
      );
    });
  });

  it('keeps nothing a transaction learned before a delete that a later transaction has seen', async () => {
    await withStore(async (h, tenant) => {
      const a = await createAgent(h.store, tenant, { name: 'a' });
      const other = await createAgent(h.store, tenant, { name: 'other' });
      // Resolved and committed, but what it learned is not kept yet (its caller is slow).
      const first = await h.store.withTenant(tenant, (tx) =>
        ingestInTransaction(h.store, tx, tenant, [seen({ kind: 'agent', id: a.id }, { ref: 'r' })]),
      );
      await deleteAgent(h.store, recordHooks(), tenant, a.id);
      // A later batch reads the moved counter; then the slow caller keeps what it learned.
      await ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: other.id }, { ref: 'r' })]);
      await afterIngestCommit(h.store, first);
      await refused(h, tenant, [seen({ kind: 'agent', id: a.id }, { ref: 'r' })], new RegExp(a.id));
    });
  });

  it('a delete rolled back leaves the cache as good as it was', async () => {
    await withStore(async (h, tenant) => {
      const a = await createAgent(h.store, tenant, { name: 'a' });
      await ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: a.id }, { ref: 'r' })]);
      await assert.rejects(
        h.store.withTenant(tenant, async (tx) => {
          await tx.deleteFrom('agents').where('id', '=', a.id).execute();
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      assert.equal(
        (await h.admin.query<{ n: number }>('select n from access_node_epoch'))[0]?.n,
        0,
        'the counter rolled back with the delete',
      );
      assert.equal((await ingestObservations(h.store, tenant, [seen({ kind: 'agent', id: a.id }, { ref: 'r' })])).accepted, 1);
    });
  });
});
