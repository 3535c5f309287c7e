/**
 * SQLite keeps each tenant's linking resources (credential, config, code) in memory for path
 * searches (src/modules/accessmap/linking-set.ts). The set must answer exactly what the connection
 * reads from `access_nodes` at that moment, whoever wrote it and however the write ended:
 * committed, rolled back to its savepoint, uncommitted in the same group commit, or written by
 * another connection to the file. A random sequence of those writes is checked against a model
 * after every step, and a search is checked to follow a class change at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { newId } from '../../../src/store/ids.js';
import { reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { storeGraphSource } from '../../../src/modules/accessmap/graph-source.js';
import { linkingIdsFromEnv, linkingNodes } from '../../../src/modules/accessmap/linking-set.js';
import { nowTimestamp } from '../../../src/ledger/time.js';
import type { SqliteHandle, Store } from '../../../src/store/store.js';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { addTenant, agentRow, nodeNo } from '../../store/store-fixtures.js';

const CLASSES = ['data', 'config', 'code', 'credential'] as const;
type Class = (typeof CLASSES)[number];
const isLinking = (c: Class): boolean => c !== 'data';

type Fact = [id: string, cls: Class, name: string, parent: string | null];

/** The linking resources as a search inside a transaction of `tenant` sees them (id, class, name; sorted by id), or undefined. */
function factsOf(store: Store, tx: Parameters<Parameters<Store['withTenant']>[1]>[0], tenant: string): Fact[] | undefined {
  const db = store.sqlite?.handle(tx) as SqliteHandle;
  const m = linkingNodes(db, tenant);
  if (m === undefined) return undefined;
  // Keyed by each node's number, as the connection reads it now.
  const numberOf = db.prepare('select no from access_nodes where id = ?').pluck();
  for (const [no, n] of m) assert.equal(no, numberOf.get(n.id));
  return [...m.values()].map((n): Fact => [n.id, n.class as Class, n.name, n.parent_id]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

async function setOf(store: Store, tenant: string): Promise<Fact[] | undefined> {
  return store.withTenant(tenant, async (tx) => factsOf(store, tx, tenant));
}

function insertResource(tenant: string, id: string, cls: Class) {
  return {
    id,
    tenant_id: tenant,
    kind: 'resource' as const,
    ref: `r://${id}`,
    name: id,
    class: cls,
    parent_id: null,
    created_at: nowTimestamp(),
  };
}

type Op =
  | { op: 'create'; cls: Class }
  | { op: 'set'; node: number; cls: Class }
  | { op: 'rolled-back'; node: number; cls: Class; create: boolean; then: Class | null }
  | { op: 'group'; node: number; cls: Class }
  | { op: 'other-connection'; node: number; cls: Class }
  | { op: 'other-connection-delete'; node: number }
  | { op: 'rename'; node: number; name: string }
  | { op: 'other-connection-reparent'; node: number; parent: boolean }
  | { op: 'other-connection-reid'; node: number };

const arbitraryOp: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), cls: fc.constantFrom(...CLASSES) }),
  fc.record({ op: fc.constant('set' as const), node: fc.nat(), cls: fc.constantFrom(...CLASSES) }),
  fc.record({
    op: fc.constant('rolled-back' as const),
    node: fc.nat(),
    cls: fc.constantFrom(...CLASSES),
    create: fc.boolean(),
    then: fc.option(fc.constantFrom(...CLASSES)),
  }),
  fc.record({ op: fc.constant('group' as const), node: fc.nat(), cls: fc.constantFrom(...CLASSES) }),
  fc.record({ op: fc.constant('other-connection' as const), node: fc.nat(), cls: fc.constantFrom(...CLASSES) }),
  fc.record({ op: fc.constant('other-connection-delete' as const), node: fc.nat() }),
  fc.record({ op: fc.constant('rename' as const), node: fc.nat(), name: fc.string({ minLength: 1, maxLength: 12 }) }),
  fc.record({ op: fc.constant('other-connection-reparent' as const), node: fc.nat(), parent: fc.boolean() }),
  fc.record({ op: fc.constant('other-connection-reid' as const), node: fc.nat() }),
);

describe('sqlite: the in-memory linking set follows every write', () => {
  let h: TestStore;
  before(async () => {
    h = await createSqliteTestStore();
    await h.store.migrate();
  });
  after(async () => h?.dispose());

  it(
    'equals the linking resources the connection reads, after commits, rollbacks, group commits and another connection’s writes ' +
      '(fast-check)',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(arbitraryOp, { minLength: 1, maxLength: 25 }), async (ops) => {
          const store = h.store;
          const tenant = await addTenant(store);
          const model = new Map<string, { cls: Class; name: string; parent?: string | null }>();
          const linkingOf = (m: typeof model): Fact[] =>
            [...m]
              .filter(([, n]) => isLinking(n.cls))
              .map(([id, n]): Fact => [id, n.cls, n.name, n.parent ?? null])
              .sort((a, b) => (a[0] < b[0] ? -1 : 1));
          const expected = () => linkingOf(model);
          const withClass = (id: string, cls: Class) => new Map(model).set(id, { ...model.get(id), cls, name: model.get(id)?.name ?? id });
          const pick = (n: number): string | undefined => [...model.keys()][n % Math.max(1, model.size)];
          // Loaded empty first, so every later change reaches the set through the change log.
          assert.deepEqual(await setOf(store, tenant), []);
          for (const o of ops) {
            if (o.op === 'create') {
              const id = newId();
              await store.withTenant(tenant, (tx) =>
                tx
                  .insertInto('access_nodes')
                  .values(insertResource(tenant, id, o.cls))
                  .execute(),
              );
              model.set(id, { cls: o.cls, name: id });
            } else if (o.op === 'rename') {
              const id = pick(o.node);
              if (id === undefined) continue;
              await store.withTenant(tenant, (tx) =>
                tx.updateTable('access_nodes').set({ name: o.name }).where('tenant_id', '=', tenant).where('id', '=', id).execute(),
              );
              model.set(id, { ...(model.get(id) as { cls: Class }), name: o.name });
            } else if (o.op === 'other-connection-reparent') {
              const id = pick(o.node);
              if (id === undefined) continue;
              const parent = o.parent ? newId() : null;
              await h.admin.query('update access_nodes set parent_id = ? where id = ?', [parent, id]);
              model.set(id, { ...(model.get(id) as { cls: Class; name: string }), parent });
            } else if (o.op === 'set' || o.op === 'group') {
              const id = pick(o.node);
              if (id === undefined) continue;
              const write = store.withTenant(tenant, (tx) =>
                tx.updateTable('access_nodes').set({ class: o.cls }).where('tenant_id', '=', tenant).where('id', '=', id).execute(),
              );
              if (o.op === 'group') {
                // Queued together, the two share one BEGIN … COMMIT: the second reads the first's
                // write before it is committed, and the set must too.
                const [, seen] = await Promise.all([write, setOf(store, tenant)]);
                assert.deepEqual(seen, linkingOf(withClass(id, o.cls)), 'a later member of the group reads the earlier one’s write');
              } else await write;
              model.set(id, withClass(id, o.cls).get(id) as { cls: Class; name: string });
            } else if (o.op === 'rolled-back') {
              const id = o.create ? newId() : pick(o.node);
              if (id === undefined) continue;
              const failed = await store
                .withTenant(tenant, async (tx) => {
                  if (o.create)
                    await tx
                      .insertInto('access_nodes')
                      .values(insertResource(tenant, id, o.cls))
                      .execute();
                  else
                    await tx
                      .updateTable('access_nodes')
                      .set({ class: o.cls })
                      .where('tenant_id', '=', tenant)
                      .where('id', '=', id)
                      .execute();
                  // Read inside the transaction that wrote: the set takes in the change…
                  assert.deepEqual(factsOf(store, tx, tenant), linkingOf(withClass(id, o.cls)));
                  throw new Error('roll back');
                })
                .then(
                  () => false,
                  (err: Error) => err.message === 'roll back',
                );
              assert.ok(failed, 'the member rolled back for the reason the test gave');
              // …and must give it up once the member is rolled back (model unchanged), even when the
              // next write, before any read, takes the rolled-back change's place in the log.
              if (o.then !== null) {
                const next = newId();
                await store.withTenant(tenant, (tx) =>
                  tx
                    .insertInto('access_nodes')
                    .values(insertResource(tenant, next, o.then as Class))
                    .execute(),
                );
                model.set(next, { cls: o.then, name: next });
              }
            } else if (o.op === 'other-connection-reid') {
              // A new id, the same node (and number): the set is keyed by number and must follow.
              const id = pick(o.node);
              if (id === undefined) continue;
              const next = newId();
              await h.admin.query('update access_nodes set id = ? where id = ?', [next, id]);
              model.set(next, model.get(id) as { cls: Class; name: string });
              model.delete(id);
            } else if (o.op === 'other-connection') {
              const id = pick(o.node);
              if (id === undefined) continue;
              await h.admin.query('update access_nodes set class = ? where id = ?', [o.cls, id]);
              model.set(id, withClass(id, o.cls).get(id) as { cls: Class; name: string });
            } else {
              const id = pick(o.node);
              if (id === undefined) continue;
              await h.admin.query('delete from access_nodes where id = ?', [id]);
              model.delete(id);
            }
            assert.deepEqual(await setOf(store, tenant), expected(), `after ${JSON.stringify(o)}`);
          }
          const truth = await h.admin.query<{ id: string; class: Class; name: string; parent_id: string | null }>(
            "select id, class, name, parent_id from access_nodes where tenant_id = ? and class in ('credential', 'config', 'code') " +
              'order by id',
            [tenant],
          );
          assert.deepEqual(
            truth.map((r): Fact => [r.id, r.class, r.name, r.parent_id]),
            expected(),
            'the model is what the file holds',
          );
        }),
        { numRuns: 40 },
      );
    },
  );

  it('a reachability search follows a class change at once: a config resource links, the same resource as data does not', async () => {
    const store = h.store;
    const tenant = await addTenant(store);
    const now = nowTimestamp();
    const [agent, identity, config, secret] = [newId(), newId(), newId(), newId()];
    await store.withTenant(tenant, async (tx) => {
      await tx.insertInto('agents').values(agentRow(tenant, { id: agent, name: 'writer' })).execute();
      await tx
        .insertInto('access_nodes')
        .values([
          {
            id: identity,
            tenant_id: tenant,
            kind: 'identity',
            ref: 'svc-deploy',
            name: 'svc-deploy',
            class: '',
            parent_id: null,
            created_at: now,
          },
          insertResource(tenant, config, 'config'),
          insertResource(tenant, secret, 'data'),
        ])
        .execute();
      const edge = (origin_kind: 'agent' | 'identity', origin_id: string, resource_id: string, mode: 'r' | 'rw') => ({
        id: newId(),
        tenant_id: tenant,
        origin_kind,
        origin_id,
        origin_no: nodeNo(origin_id),
        resource_id,
        resource_no: nodeNo(resource_id),
        mode,
        permitted: 1,
        grant_source: 'iam',
        observed_count: 0,
        first_seen: null,
        last_seen: null,
        confidence: '',
        signal_source: '',
        created_at: now,
        updated_at: now,
      });
      // The agent writes the config the deploy identity reads; only the identity reads the secret.
      await tx
        .insertInto('access_edges')
        .values([edge('agent', agent, config, 'rw'), edge('identity', identity, config, 'r'), edge('identity', identity, secret, 'r')])
        .execute();
    });
    const reached = async () =>
      store.withTenant(tenant, async (tx) => {
        const r = await reachability(storeGraphSource(tx, tenant, store.sqlite?.handle(tx)), agent);
        return r.items.map((i) => i.resource.id).sort();
      });
    assert.deepEqual(await reached(), [config, secret].sort(), 'through the config the identity reads');
    await store.withTenant(tenant, (tx) => tx.updateTable('access_nodes').set({ class: 'data' }).where('id', '=', config).execute());
    assert.deepEqual(await reached(), [config], 'writing data controls nobody');
    await h.admin.query("update access_nodes set class = 'code' where id = ?", [config]);
    assert.deepEqual(await reached(), [config, secret].sort(), 'code written by another connection links again');
  });
});

describe('SERVICE_ACCESSMAP_LINKING_IDS', () => {
  it('defaults to 1,000,000, takes 0 (off) to 100,000,000, and refuses anything else', () => {
    assert.equal(linkingIdsFromEnv({}), 1_000_000);
    assert.equal(linkingIdsFromEnv({ SERVICE_ACCESSMAP_LINKING_IDS: '0' }), 0);
    assert.equal(linkingIdsFromEnv({ SERVICE_ACCESSMAP_LINKING_IDS: '100000000' }), 100_000_000);
    for (const bad of ['-1', '1.5', 'lots', '100000001', '1e9'])
      assert.throws(
        () => linkingIdsFromEnv({ SERVICE_ACCESSMAP_LINKING_IDS: bad }),
        /SERVICE_ACCESSMAP_LINKING_IDS must be an integer from 0 to 100000000/,
      );
  });
});
