import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, getAgent } from '../../../src/core/agents/agent-service.js';
import { escalation, exfil, reachability } from '../../../src/modules/accessmap/attack-paths.js';
import { ingestObservations, revokeGrants, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { listDrift, listEdges } from '../../../src/modules/accessmap/edge-query.js';
import { storeGraphSource } from '../../../src/modules/accessmap/graph-source.js';
import { neighbors } from '../../../src/modules/accessmap/neighbors.js';
import { foldRecent } from '../../../src/modules/accessmap/recent-edges.js';
import { writeNodes } from '../../../src/modules/accessmap/node-store.js';
import { attackPathSummary } from '../../../src/modules/accessmap/summary.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

const T0 = '2026-06-01T10:00:00.000000000Z';
const T1 = '2026-06-02T10:00:00.000000000Z';
const T2 = '2026-06-03T10:00:00.000000000Z';

const obs = (origin: Observation['origin'], ref: string, mode: 'r' | 'rw', extra: Partial<Observation> = {}): Observation => ({
  origin,
  resource: { ref },
  mode,
  confidence: 'high',
  signal_source: 'cloudtrail',
  observed_at: T1,
  ...extra,
});

for (const b of await testStores()) {
  describe(`${b.backend}: accessmap store`, { skip: b.skip }, () => {
    let h: TestStore;
    let tenant: string;
    let other: string;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
      tenant = await addTenant(h.store);
      other = await addTenant(h.store);
    });
    after(async () => h?.dispose());

    it(
      'folds observations of one access into one edge: counts add, seen-range widens, confidence keeps the strongest but never exceeds ' +
        'what the attribution allows',
      async () => {
        const a = await createAgent(h.store, tenant, { name: 'fold-agent', external_id: 'fold-1' });
        const res = await ingestObservations(h.store, tenant, [
          obs({ kind: 'agent', id: a.id }, 'fold://bucket', 'r', { observed_at: T1, confidence: 'low' }),
          obs({ kind: 'agent', ref: 'fold-1' }, 'fold://bucket', 'r', { observed_at: T0, confidence: 'medium', count: 4 }),
          obs({ kind: 'identity', ref: 'fold-svc' }, 'fold://bucket', 'r', { confidence: 'high', attribution: 'shared_identity' }),
        ]);
        assert.deepEqual(res, { accepted: 3, edges: 2 });
        await ingestObservations(h.store, tenant, [
          obs({ kind: 'agent', id: a.id }, 'fold://bucket', 'r', {
            observed_at: T2,
            confidence: 'high',
            attribution: 'inferred',
            signal_source: 'proxy',
          }),
        ]);
        const page = await listEdges(h.store, tenant, { origin_id: a.id, limit: 10 });
        assert.equal(page.items.length, 1);
        const e = page.items[0];
        assert.equal(e?.observed_count, 6);
        assert.equal(e?.first_seen, T0);
        assert.equal(e?.last_seen, T2);
        assert.equal(e?.confidence, 'medium', 'inferred attribution caps high at medium');
        assert.equal(e?.signal_source, 'proxy', 'the latest observation names the source');
        assert.equal(e?.origin_name, 'fold-agent');
        assert.equal(e?.resource_name, 'fold://bucket');
        assert.equal(e?.permitted, false);
        const svc = await listEdges(h.store, tenant, { origin_kind: 'identity', resource_id: e?.resource_id, limit: 10 });
        assert.equal(svc.items[0]?.confidence, 'low', 'a shared identity cannot give more than low');
      },
    );

    it('graph filters: mode, origin kind, signal source, confidence floor, resource', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'f' });
      await ingestObservations(h.store, t, [
        obs({ kind: 'agent', id: a.id }, 'r1', 'r', { confidence: 'low' }),
        obs({ kind: 'agent', id: a.id }, 'r2', 'rw', { confidence: 'medium', signal_source: 'edr' }),
        obs({ kind: 'session', ref: 's-1' }, 'r1', 'r', { confidence: 'high' }),
      ]);
      await upsertGrants(h.store, t, [{ origin: { kind: 'agent', id: a.id }, resource: { ref: 'r3' }, mode: 'r', source: 'iam' }]);
      const all = await listEdges(h.store, t, { limit: 100 });
      assert.equal(all.items.length, 4);
      const names = (p: typeof all) => p.items.map((e) => `${e.origin_kind}:${e.resource_name}:${e.mode}`).sort();
      assert.deepEqual(names(await listEdges(h.store, t, { mode: 'rw', limit: 100 })), ['agent:r2:rw']);
      assert.deepEqual(names(await listEdges(h.store, t, { origin_kind: 'session', limit: 100 })), ['session:r1:r']);
      assert.deepEqual(names(await listEdges(h.store, t, { signal_source: 'edr', limit: 100 })), ['agent:r2:rw']);
      assert.deepEqual(names(await listEdges(h.store, t, { confidence: 'medium', limit: 100 })), ['agent:r2:rw', 'session:r1:r']);
      assert.deepEqual(names(await listEdges(h.store, t, { signal_source: 'iam', limit: 100 })), ['agent:r3:r']);
      const r1 = all.items.find((e) => e.resource_name === 'r1')?.resource_id as string;
      assert.deepEqual(names(await listEdges(h.store, t, { resource_id: r1, limit: 100 })), ['agent:r1:r', 'session:r1:r']);
    });

    it('drift on a known estate: unexpected and unused with honest confidence', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'A' });
      const bAgent = await createAgent(h.store, t, { name: 'B' });
      const A = { kind: 'agent' as const, id: a.id };
      const B = { kind: 'agent' as const, id: bAgent.id };
      await upsertGrants(h.store, t, [
        { origin: A, resource: { ref: 'db' }, mode: 'r', source: 'iam' },
        { origin: A, resource: { ref: 'cfg' }, mode: 'r', source: 'iam' },
        { origin: A, resource: { ref: 'logs' }, mode: 'rw', source: 'iam' },
        { origin: B, resource: { ref: 'db' }, mode: 'r', source: 'iam' },
      ]);
      await ingestObservations(h.store, t, [
        obs(A, 'db', 'r'), // granted and used: no drift
        obs(A, 'cfg', 'rw'), // writes where only reading is granted: unexpected
        obs(A, 'logs', 'r'), // reads under an rw grant: covered, but the write part is unused
        obs({ kind: 'identity', ref: 'svc-shared' }, 'secrets', 'r', { confidence: 'high', attribution: 'shared_identity' }),
      ]);
      const drift = await listDrift(h.store, t, { limit: 100 });
      const got = drift.items
        .map((d) => `${d.origin_name ?? d.origin_kind}:${d.resource_name}:${d.mode}:${d.drift}:${d.drift_confidence}`)
        .sort();
      assert.deepEqual(got, [
        'A:cfg:rw:unexpected:high',
        'A:logs:rw:unused:medium',
        'B:db:r:unused:low',
        'svc-shared:secrets:r:unexpected:low',
      ]);
      assert.match(drift.items.find((d) => d.origin_kind === 'identity')?.basis ?? '', /which agent or person used it is not known/);
      assert.deepEqual((await listDrift(h.store, t, { drift: 'unused', limit: 100 })).items.map((d) => d.resource_name).sort(), [
        'db',
        'logs',
      ]);
      assert.equal((await listDrift(h.store, t, { confidence: 'medium', limit: 100 })).items.length, 2);
      // Granting the write turns the unexpected write into no drift at all; revoking B's grant removes its edge.
      await upsertGrants(h.store, t, [{ origin: A, resource: { ref: 'cfg' }, mode: 'rw', source: 'iam' }]);
      await revokeGrants(h.store, t, [{ origin: B, resource: { ref: 'db' }, mode: 'r' }]);
      const after2 = (await listDrift(h.store, t, { limit: 100 })).items.map((d) => `${d.resource_name}:${d.drift}`).sort();
      // cfg: the rw write is now granted (same row: permitted and observed), and the r grant is used by that write.
      assert.deepEqual(after2, ['logs:unused', 'secrets:unexpected']);
      const sum = await attackPathSummary(h.store, t);
      assert.equal(sum.drift.unexpected, 1);
      assert.equal(sum.drift.unused, 1);
      assert.equal(sum.nodes.agents, 2);
    });

    it('neighbors, attack paths on the stored graph, and tenant isolation', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'A' });
      const bb = await createAgent(h.store, t, { name: 'B' });
      const [bot] = await writeNodes(h.store, t, [{ kind: 'identity', ref: 'deploy-bot' }]);
      const nodes = await writeNodes(h.store, t, [
        { kind: 'session', ref: 'sess-1', parent_id: a.id },
        { kind: 'resource', ref: 'cfg', class: 'config' },
        { kind: 'resource', ref: 'key', class: 'credential', parent_id: bot?.id },
        { kind: 'resource', ref: 'db', class: 'data' },
      ]);
      const db = nodes.find((n) => n.ref === 'db')?.id as string;
      await upsertGrants(h.store, t, [
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 'cfg' }, mode: 'rw', source: 'iam' },
        { origin: { kind: 'agent', id: bb.id }, resource: { ref: 'key' }, mode: 'r', source: 'iam' },
        { origin: { kind: 'identity', ref: 'deploy-bot' }, resource: { ref: 'db' }, mode: 'rw', source: 'iam' },
      ]);
      await ingestObservations(h.store, t, [
        obs({ kind: 'agent', id: bb.id }, 'cfg', 'r'),
        obs({ kind: 'session', ref: 'sess-1' }, 'db', 'r'),
      ]);
      // A path search on the stored graph reads access_edges: what waits in the recent level (SQLite) is folded first, as the routes do.
      await foldRecent(h.store);
      const esc = await h.store.withTenant(t, (tx) => escalation(storeGraphSource(tx, t), a.id));
      assert.deepEqual(esc.targets.map((x) => [x.target.name, x.path.length]), [['B', 1], ['deploy-bot', 2]]);
      const reach = await h.store.withTenant(t, (tx) => reachability(storeGraphSource(tx, t), a.id));
      assert.deepEqual(
        reach.items.map((x) => [x.resource.name, x.mode, x.path.length]),
        [
          ['cfg', 'rw', 1],
          ['key', 'r', 2],
          ['db', 'rw', 3],
        ],
      );
      const ex = await h.store.withTenant(t, (tx) => exfil(storeGraphSource(tx, t), db));
      assert.deepEqual(ex.items.map((x) => [x.principal.name, x.path.length]), [['sess-1', 1], ['deploy-bot', 1], ['A', 2], ['B', 2]]);

      const out = await neighbors(h.store, t, { id: a.id, direction: 'outgoing', limit: 10 });
      assert.equal(out.node.kind, 'agent');
      assert.deepEqual(out.items.map((e) => e.resource_name), ['cfg']);
      assert.deepEqual(out.links.map((l) => [l.relation, l.direction, l.node.ref]), [['runs', 'outgoing', 'sess-1']]);
      const inc = await neighbors(h.store, t, { id: nodes.find((n) => n.ref === 'cfg')?.id as string, direction: 'both', limit: 1 });
      assert.equal(inc.items.length, 1);
      assert.equal(inc.has_more, true);
      const rest = await neighbors(h.store, t, { id: inc.node.id, direction: 'both', limit: 1, cursor: inc.cursor });
      assert.equal(rest.has_more, false);
      assert.deepEqual([...inc.items, ...rest.items].map((e) => e.origin_name).sort(), ['A', 'B']);
      const key = await neighbors(h.store, t, { id: nodes.find((n) => n.ref === 'key')?.id as string, direction: 'outgoing', limit: 10 });
      assert.deepEqual(key.links.map((l) => [l.relation, l.node.ref]), [['authenticates_as', 'deploy-bot']]);

      // Another tenant sees none of it and cannot address it.
      assert.deepEqual((await listEdges(h.store, other, { limit: 100 })).items, []);
      await assert.rejects(getAgent(h.store, other, a.id), { code: 'not_found' });
      await assert.rejects(neighbors(h.store, other, { id: a.id, direction: 'both', limit: 10 }), { code: 'not_found' });
      await assert.rejects(ingestObservations(h.store, other, [obs({ kind: 'agent', id: a.id }, 'x', 'r')]), { code: 'not_found' });
      const otherEsc = await h.store.withTenant(other, (tx) => escalation(storeGraphSource(tx, other), a.id));
      assert.deepEqual(otherEsc.targets, []);
    });

    it('nodes: a session names an agent, a credential an identity; other parents are refused', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'p' });
      const [idn] = await writeNodes(h.store, t, [{ kind: 'identity', ref: 'svc' }]);
      await assert.rejects(writeNodes(h.store, t, [{ kind: 'session', ref: 's', parent_id: idn?.id }]), { code: 'not_found' });
      await assert.rejects(writeNodes(h.store, t, [{ kind: 'resource', ref: 'k', class: 'credential', parent_id: a.id }]), {
        code: 'not_found',
      });
      await assert.rejects(writeNodes(h.store, t, [{ kind: 'resource', ref: 'd', class: 'data', parent_id: idn?.id }]), {
        code: 'bad_request',
      });
      const [s1] = await writeNodes(h.store, t, [{ kind: 'session', ref: 's', parent_id: a.id }]);
      assert.equal(s1?.parent_id, a.id);
      // Upsert by ref: the same ref updates, it does not duplicate.
      const [again] = await writeNodes(h.store, t, [{ kind: 'session', ref: 's', name: 'renamed' }]);
      assert.deepEqual([again?.id, again?.name, again?.parent_id], [s1?.id, 'renamed', a.id]);
    });

    it('search: substring over agents, workspaces and (when allowed) graph nodes; % and _ match themselves', async () => {
      const { search } = await import('../../../src/core/search/search-service.js');
      const { createWorkspace } = await import('../../../src/core/workspaces/workspace-service.js');
      const t = await addTenant(h.store);
      await createAgent(h.store, t, { name: 'Payments-Copilot', external_id: 'pc_1' });
      await createWorkspace(h.store, t, { root_path: '/srv/payments' });
      await writeNodes(h.store, t, [{ kind: 'resource', ref: 's3://payments-100%' }]);
      const all = await search(h.store, t, 'PAYMENTS', { limit: 10, graph: true });
      assert.deepEqual(all.items.map((i) => i.kind), ['agent', 'workspace', 'resource']);
      assert.deepEqual(
        (await search(h.store, t, 'payments', { limit: 10, graph: false })).items.map((i) => i.kind),
        ['agent', 'workspace'],
      );
      assert.deepEqual((await search(h.store, t, '100%', { limit: 10, graph: true })).items.map((i) => i.detail), ['s3://payments-100%']);
      assert.deepEqual((await search(h.store, t, 'pc_', { limit: 10, graph: true })).items.map((i) => i.kind), ['agent']);
      assert.deepEqual((await search(h.store, t, 'p_c', { limit: 10, graph: true })).items, [], '_ is not a wildcard');
      const limited = await search(h.store, t, 'pay', { limit: 2, graph: true });
      assert.deepEqual([limited.items.length, limited.has_more], [2, true]);
      assert.deepEqual((await search(h.store, other, 'payments', { limit: 10, graph: true })).items, []);
    });

    it('a suspended tenant refuses graph writes with 423 and still serves reads', async () => {
      const t = await addTenant(h.store, { status: 'suspended' });
      await assert.rejects(
        upsertGrants(h.store, t, [{ origin: { kind: 'identity', ref: 'x' }, resource: { ref: 'y' }, mode: 'r', source: 'iam' }]),
        { code: 'tenant_suspended', status: 423 },
      );
      assert.deepEqual((await listEdges(h.store, t, { limit: 5 })).items, []);
    });
  });
}
