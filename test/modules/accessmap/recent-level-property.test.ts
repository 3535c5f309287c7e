/**
 * The recent level (src/modules/accessmap/recent-edges.ts) against a reference model: random
 * interleavings of observation batches (small ones go straight into access_edges, larger ones wait
 * in the recent level), grants (straight in, or waiting behind waiting rows), revokes, agent
 * deletes (and the agent made again), explicit merges, slices cut anywhere and reads give exactly
 * the edges that applying every write in commit order to a map gives. On Postgres (no recent level) the same
 * property holds for the direct path. Plus: waiting observations survive a restart, and an agent
 * deleted while its observations wait does not come back.
 */
import { recordHooks } from '../../../src/routes.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createAgent, deleteAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, revokeGrants, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listEdges } from '../../../src/modules/accessmap/edge-query.js';
import type { AccessEdge, Confidence, Mode } from '../../../src/modules/accessmap/model.js';
import { SLICE_ROWS, foldRecent, mergeOnWorker } from '../../../src/modules/accessmap/recent-edges.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

const ORIGINS = ['ident-0', 'ident-1', 'ident-2', 'agent-0', 'agent-1', 'ident-3'] as const;
const RESOURCES = Array.from({ length: 8 }, (_, i) => `res-${i}`);
const MODES: Mode[] = ['r', 'rw'];
const KEYS = ORIGINS.flatMap((o) => RESOURCES.flatMap((r) => MODES.map((m) => ({ o, r, m }))));
const TIMES = ['2026-06-01T10:00:00.000000000Z', '2026-06-02T10:00:00.000000000Z', '2026-06-03T10:00:00.000000000Z'];
const RANK: Record<string, number> = { '': 0, low: 1, medium: 2, high: 3 };

interface ModelEdge {
  count: number;
  first: string | null;
  last: string | null;
  confidence: string;
  signal: string;
  permitted: boolean;
  grant: string;
}

type Op =
  | { kind: 'observe'; keys: number[]; times: number[]; conf: Confidence[]; signal: string[]; count: number[] }
  | { kind: 'grant'; key: number; source: string }
  | { kind: 'revoke'; key: number }
  | { kind: 'forget'; agent: 'agent-0' | 'agent-1' }
  | { kind: 'merge' }
  | { kind: 'slice'; rows: number }
  | { kind: 'read' };

const confidence = fc.constantFrom<Confidence>('low', 'medium', 'high');
const observeOp = (min: number, max: number) =>
  fc.integer({ min, max }).chain((n) =>
    fc.record({
      kind: fc.constant('observe' as const),
      keys: fc.array(fc.integer({ min: 0, max: KEYS.length - 1 }), { minLength: n, maxLength: n }),
      times: fc.array(fc.integer({ min: 0, max: TIMES.length - 1 }), { minLength: n, maxLength: n }),
      conf: fc.array(confidence, { minLength: n, maxLength: n }),
      signal: fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: n, maxLength: n }),
      count: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: n, maxLength: n }),
    }),
  );
const op: fc.Arbitrary<Op> = fc.oneof(
  // Small batches (fewer distinct edges than edge-store's DIRECT_MAX) and large ones (more): both write paths.
  { arbitrary: observeOp(1, 6), weight: 3 },
  { arbitrary: observeOp(90, 160), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant('grant' as const),
      key: fc.integer({ min: 0, max: KEYS.length - 1 }),
      source: fc.constantFrom('iam', 'acl'),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('revoke' as const), key: fc.integer({ min: 0, max: KEYS.length - 1 }) }), weight: 1 },
  // An agent deleted (its edges go with it) and made again under the same name, with a new id.
  {
    arbitrary: fc.record({ kind: fc.constant('forget' as const), agent: fc.constantFrom('agent-0' as const, 'agent-1' as const) }),
    weight: 1,
  },
  { arbitrary: fc.constant({ kind: 'merge' as const }), weight: 1 },
  // A fold of the oldest waiting rows only (what idle folding runs), cut anywhere.
  { arbitrary: fc.record({ kind: fc.constant('slice' as const), rows: fc.integer({ min: 1, max: 200 }) }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'read' as const }), weight: 1 },
);

/** Applies one write to the model, in commit order, as docs/accessmap.md defines the fold. */
function applyModel(model: Map<string, ModelEdge>, o: Op): void {
  const keyOf = (i: number) => {
    const k = KEYS[i] as (typeof KEYS)[number];
    return `${k.o}|${k.r}|${k.m}`;
  };
  if (o.kind === 'observe') {
    o.keys.forEach((ki, j) => {
      const key = keyOf(ki);
      const at = TIMES[o.times[j] as number] as string;
      const conf = o.conf[j] as string;
      const e = model.get(key) ?? { count: 0, first: null, last: null, confidence: '', signal: '', permitted: false, grant: '' };
      e.count += o.count[j] as number;
      if (e.first === null || at < e.first) e.first = at;
      if (e.last === null || at >= e.last) {
        e.last = at;
        e.signal = o.signal[j] as string;
      }
      if ((RANK[conf] as number) > (RANK[e.confidence] as number)) e.confidence = conf;
      model.set(key, e);
    });
  } else if (o.kind === 'grant') {
    const key = keyOf(o.key);
    const e = model.get(key);
    if (e) {
      e.permitted = true;
      e.grant = o.source;
    } else model.set(key, { count: 0, first: null, last: null, confidence: '', signal: o.source, permitted: true, grant: o.source });
  } else if (o.kind === 'forget') {
    for (const key of [...model.keys()]) if (key.startsWith(`${o.agent}|`)) model.delete(key);
  } else if (o.kind === 'revoke') {
    const key = keyOf(o.key);
    const e = model.get(key);
    if (e && e.count === 0) model.delete(key);
    else if (e) {
      e.permitted = false;
      e.grant = '';
    }
  }
}

async function readAll(h: TestStore, tenant: string): Promise<AccessEdge[]> {
  const out: AccessEdge[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listEdges(h.store, tenant, { limit: 37, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    if (!page.has_more) return out;
    cursor = page.cursor;
  }
}

function assertMatches(edges: AccessEdge[], model: Map<string, ModelEdge>): void {
  assert.equal(new Set(edges.map((e) => e.id)).size, edges.length, 'each edge once');
  assert.deepEqual(edges.map((e) => e.id), [...edges.map((e) => e.id)].sort(), 'in id order');
  const got = new Map(edges.map((e) => [`${e.origin_name}|${e.resource_name}|${e.mode}`, e]));
  assert.deepEqual([...got.keys()].sort(), [...model.keys()].sort(), 'the same accesses');
  for (const [key, m] of model) {
    const e = got.get(key) as AccessEdge;
    assert.deepEqual(
      {
        count: e.observed_count,
        first: e.first_seen,
        last: e.last_seen,
        confidence: e.confidence ?? '',
        signal: e.signal_source,
        permitted: e.permitted,
        grant: e.grant_source,
      },
      { count: m.count, first: m.first, last: m.last, confidence: m.confidence, signal: m.signal, permitted: m.permitted, grant: m.grant },
      key,
    );
  }
}

function originOf(name: string, agents: Map<string, string>): Observation['origin'] {
  return name.startsWith('agent-') ? { kind: 'agent', id: agents.get(name) as string } : { kind: 'identity', ref: name };
}

for (const b of await testStores()) {
  describe(`${b.backend}: the recent level folds into the same edges as direct writes (fast-check)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('random observations, grants, revokes, merges, slices and reads equal a map applied in commit order', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
          const tenant = await addTenant(h.store);
          const agents = new Map<string, string>();
          for (const name of ORIGINS.filter((o) => o.startsWith('agent-')))
            agents.set(name, (await createAgent(h.store, tenant, { name })).id);
          const model = new Map<string, ModelEdge>();
          for (const o of ops) {
            if (o.kind === 'observe') {
              await ingestObservations(
                h.store,
                tenant,
                o.keys.map((ki, j) => {
                  const k = KEYS[ki] as (typeof KEYS)[number];
                  return {
                    origin: originOf(k.o, agents),
                    resource: { ref: k.r },
                    mode: k.m,
                    confidence: o.conf[j] as Confidence,
                    signal_source: o.signal[j] as string,
                    observed_at: TIMES[o.times[j] as number] as string,
                    count: o.count[j] as number,
                  };
                }),
              );
            } else if (o.kind === 'grant' || o.kind === 'revoke') {
              const k = KEYS[o.key] as (typeof KEYS)[number];
              const g = { origin: originOf(k.o, agents), resource: { ref: k.r }, mode: k.m };
              if (o.kind === 'grant') await upsertGrants(h.store, tenant, [{ ...g, source: o.source }]);
              else await revokeGrants(h.store, tenant, [g]);
            } else if (o.kind === 'forget') {
              await deleteAgent(h.store, recordHooks(), tenant, agents.get(o.agent) as string);
              agents.set(o.agent, (await createAgent(h.store, tenant, { name: o.agent })).id);
            } else if (o.kind === 'merge') {
              await foldRecent(h.store);
            } else if (o.kind === 'slice') {
              // A merge of the oldest rows on the worker, the merged rows left in the level below the mark.
              await mergeOnWorker(h.store, o.rows);
            }
            applyModel(model, o);
            if (o.kind === 'read') assertMatches(await readAll(h, tenant), model);
          }
          assertMatches(await readAll(h, tenant), model);
        }),
        { numRuns: 25 },
      );
    });

    // SQLite only: Postgres has no recent level.
    if (b.backend === 'sqlite')
      it('a grant made while observations wait costs no merge: it waits behind them, and a read applies both in commit order', async () => {
        const tenant = await addTenant(h.store);
        const origin = { kind: 'identity' as const, ref: 'wait-ident' };
        await ingestObservations(
          h.store,
          tenant,
          Array.from({ length: 100 }, (_, i) => ({
            origin,
            resource: { ref: `wait-res-${i}` },
            mode: 'r' as const,
            confidence: 'high' as const,
            signal_source: 'obs',
            observed_at: TIMES[0] as string,
          })),
        );
        const level = async () => {
          const [w] = await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent');
          const [o] = await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent_ops');
          const [e] = await h.admin.query<{ n: number }>('select count(*) as n from access_edges where tenant_id = ?', [tenant]);
          return { waiting: Number(w?.n), ops: Number(o?.n), edges: Number(e?.n) };
        };
        const before = await level();
        assert.equal(before.edges, 0, 'the batch waits');
        await upsertGrants(h.store, tenant, [
          { origin, resource: { ref: 'wait-res-0' }, mode: 'r', source: 'iam' },
          { origin, resource: { ref: 'wait-new' }, mode: 'rw', source: 'acl' },
        ]);
        assert.deepEqual(
          await level(),
          { waiting: before.waiting + 2, ops: 2, edges: 0 },
          'the grants wait behind the observations; nothing merged',
        );
        // Then observations again: of a new access first, then of the one just granted. Applied in
        // commit order, the granted access's edge is the grant's, minted before either of these.
        await ingestObservations(h.store, tenant, [
          { origin, resource: { ref: 'wait-later' }, mode: 'r', confidence: 'low', signal_source: 'obs2', observed_at: TIMES[1] as string },
          ...Array.from({ length: 80 }, (_, i) => ({
            origin,
            resource: { ref: i === 0 ? 'wait-new' : `wait-more-${i}` },
            mode: i === 0 ? ('rw' as const) : ('r' as const),
            confidence: 'low' as const,
            signal_source: 'obs2',
            observed_at: TIMES[1] as string,
          })),
        ]);
        const edges = new Map((await readAll(h, tenant)).map((e) => [`${e.resource_name}|${e.mode}`, e]));
        assert.equal(edges.size, 181);
        const both = edges.get('wait-res-0|r');
        assert.deepEqual(
          [both?.observed_count, both?.permitted, both?.grant_source, both?.signal_source],
          [1, true, 'iam', 'obs'],
          'observed first, then granted: one edge with both',
        );
        const granted = edges.get('wait-new|rw');
        assert.deepEqual(
          [granted?.observed_count, granted?.permitted, granted?.grant_source, granted?.signal_source],
          [1, true, 'acl', 'obs2'],
        );
        assert.ok((both?.id as string) < (granted?.id as string), 'the observed edge keeps the id it was given first');
        assert.ok(
          (granted?.id as string) < (edges.get('wait-later|r')?.id as string),
          'the granted edge was made by its grant, before the later observations',
        );
        assert.deepEqual(await level(), { waiting: 0, ops: 0, edges: 181 });
      });

    if (b.backend === 'sqlite')
      it('with the writer idle, waiting observations fold themselves on the merge worker and leave the level, no read needed', async () => {
        const tenant = await addTenant(h.store);
        const n = SLICE_ROWS * 2 + 250;
        const batch = Array.from({ length: n }, (_, i) => ({
          origin: { kind: 'identity' as const, ref: `idle-${i % 7}` },
          resource: { ref: `idle-res-${i}` },
          mode: 'r' as const,
          confidence: 'high' as const,
          signal_source: 'idle',
        }));
        await ingestObservations(h.store, tenant, batch);
        const raw = async () => {
          const [w] = await h.admin.query<{ n: number }>('select count(*) as n from access_edges_recent');
          const [e] = await h.admin.query<{ n: number }>(
            'select count(*) as n from access_edges where tenant_id = ? and signal_source = ?',
            [tenant, 'idle'],
          );
          return { waiting: Number(w?.n), folded: Number(e?.n) };
        };
        const deadline = Date.now() + 10_000;
        let seen = await raw();
        while (seen.waiting > 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 10));
          seen = await raw();
        }
        // One merge of everything that waited, then its rows removed from the level.
        assert.deepEqual(seen, { waiting: 0, folded: n });
        const edges = (await readAll(h, tenant)).filter((e) => e.signal_source === 'idle');
        assert.equal(edges.length, n);
        assert.ok(edges.every((e) => e.observed_count === 1));
      });

    it('observations waiting in the recent level are there after a restart', async () => {
      const own = await b.create();
      try {
        await own.store.migrate();
        const tenant = await addTenant(own.store);
        const many = RESOURCES.flatMap((r) =>
          ORIGINS.filter((o) => o.startsWith('ident-')).flatMap((o) =>
            MODES.map((m) => ({
              origin: { kind: 'identity' as const, ref: o },
              resource: { ref: r },
              mode: m,
              confidence: 'high' as const,
              signal_source: 'restart',
            })),
          ),
        );
        await ingestObservations(own.store, tenant, many);
        await own.store.close();
        if (b.backend === 'sqlite') {
          const [waiting] = await own.admin.query<{ n: number }>('select count(*) as n from access_edges_recent');
          assert.equal(waiting?.n, many.length, 'the batch waited in the recent level');
        }
        const again = await own.reopen();
        const page = await listEdges(again, tenant, { limit: 1000 });
        assert.equal(page.items.length, many.length);
        assert.ok(page.items.every((e) => e.observed_count === 1 && e.signal_source === 'restart'));
      } finally {
        await own.dispose();
      }
    });

    it('a batch the table would refuse is refused before it is stored, so it cannot poison a later merge', async () => {
      const tenant = await addTenant(h.store);
      const good = RESOURCES.flatMap((r) =>
        MODES.flatMap((m) =>
          Array.from({ length: 5 }, (_, i) => ({
            origin: { kind: 'identity' as const, ref: 'ident-0' },
            resource: { ref: `${r}-${i}` },
            mode: m,
            confidence: 'high' as const,
            signal_source: 'ok',
          })),
        ),
      );
      for (const bad of [{ observed_at: '2026-06-01 10:00:00' }, { count: 0 }, { count: 1.5 }]) {
        await assert.rejects(
          ingestObservations(h.store, tenant, [...good, { ...good[0], ...bad } as Observation]),
          (err: { status?: number }) => err.status === 400,
        );
      }
      await ingestObservations(h.store, tenant, good);
      assert.equal((await readAll(h, tenant)).length, good.length);
    });

    it('an agent deleted while its observations wait keeps no edges; the others stay', async () => {
      const tenant = await addTenant(h.store);
      const gone = await createAgent(h.store, tenant, { name: 'gone' });
      const kept = await createAgent(h.store, tenant, { name: 'kept' });
      const batch = (id: string) =>
        RESOURCES.flatMap((r) =>
          MODES.flatMap((m) =>
            Array.from({ length: 5 }, (_, i) => ({
              origin: { kind: 'agent' as const, id },
              resource: { ref: `${r}-${i}` },
              mode: m,
              confidence: 'high' as const,
              signal_source: 'delete',
            })),
          ),
        );
      await ingestObservations(h.store, tenant, [...batch(gone.id), ...batch(kept.id)]);
      if (b.backend === 'sqlite') {
        const count = async (table: string) => Number((await h.admin.query<{ n: number }>(`select count(*) as n from ${table}`))[0]?.n);
        const waiting = await count('access_edges_recent');
        await deleteAgent(h.store, recordHooks(), tenant, gone.id);
        assert.equal(await count('access_edges_recent'), waiting + 1, 'the delete waits behind the rows: one row, no merge');
        assert.deepEqual(
          await h.admin.query(
            'select o.op from access_edges_recent_ops o join access_edges_recent r on r.seq = o.seq where r.origin_id = ?',
            [gone.id],
          ),
          [{ op: 'forget' }],
        );
      } else await deleteAgent(h.store, recordHooks(), tenant, gone.id);
      const edges = await readAll(h, tenant);
      assert.equal(edges.filter((e) => e.origin_id === gone.id).length, 0);
      assert.equal(edges.filter((e) => e.origin_id === kept.id).length, batch(kept.id).length);
    });
  });
}
