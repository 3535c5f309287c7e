/**
 * svc's own detectors on small hand-built graphs with known findings, on both backends: drift
 * (observed-but-not-permitted, unused grants) and escalation paths become findings with their
 * evidence; a finding resolves when the drift or path it reports disappears, reopens (same id)
 * when it comes back, and keeps a suppression; a search cut short by its bounds resolves nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { ingestObservations, revokeGrants, upsertGrants, type Observation } from '../../../src/modules/accessmap/edge-store.js';
import { writeNodes } from '../../../src/modules/accessmap/node-store.js';
import {
  DEFAULT_DETECTOR_BOUNDS,
  DRIFT_UNEXPECTED_RULE,
  DRIFT_UNUSED_RULE,
  ESCALATION_RULE,
  evaluateDetectors,
  Pacer,
} from '../../../src/modules/security/detectors.js';
import { getFindingRow, listFindings, triageFinding } from '../../../src/modules/security/finding-store.js';
import type { Finding } from '../../../src/modules/security/model.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

const obs = (
  origin: Observation['origin'],
  ref: string,
  mode: 'r' | 'rw',
  confidence: 'high' | 'medium' | 'low' = 'high',
): Observation => ({
  origin,
  resource: { ref },
  mode,
  confidence,
  signal_source: 'cloudtrail',
  observed_at: '2026-06-02T10:00:00.000000000Z',
});

for (const b of await testStores()) {
  describe(`${b.backend}: security detectors`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    const findings = async (t: string): Promise<Finding[]> => (await listFindings(h.store, t, { source: 'detector', limit: 1000 })).items;
    const byRule = (fs: Finding[], rule: string) =>
      fs
        .filter((f) => f.rule_id === rule)
        .map((f) => [f.subject_ref.split(' ').pop(), f.status, f.severity])
        .sort();

    it('drift becomes findings with evidence, and each resolves when its drift disappears', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'coder' });
      await upsertGrants(h.store, t, [
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 's3://payroll' }, mode: 'r', source: 'iam' },
      ]);
      await ingestObservations(h.store, t, [
        obs({ kind: 'agent', id: a.id }, 's3://secrets', 'rw'),
        obs({ kind: 'agent', id: a.id }, 's3://logs', 'r', 'low'),
      ]);
      const first = await evaluateDetectors(h.store, t);
      assert.deepEqual([first.reported.length, first.resolved.length, first.drift], [3, 0, { items: 3, complete: true }]);
      const all = await findings(t);
      assert.equal(byRule(all, DRIFT_UNEXPECTED_RULE).length, 2);
      assert.deepEqual(all.filter((f) => f.rule_id === DRIFT_UNEXPECTED_RULE).map((f) => [f.severity, f.message.split(' (')[0]]).sort(), [
        ['high', 'agent "coder" accessed s3://secrets'],
        ['low', 'agent "coder" accessed s3://logs'],
      ]);
      const unused = all.find((f) => f.rule_id === DRIFT_UNUSED_RULE) as Finding;
      assert.deepEqual([unused.severity, unused.status, unused.kind], ['low', 'open', 'drift']);
      const evidence = JSON.parse((await getFindingRow(h.store, t, unused.id)).evidence) as {
        drift: { drift: string; resource_name: string; permitted: boolean };
      };
      assert.deepEqual([evidence.drift.drift, evidence.drift.resource_name, evidence.drift.permitted], ['unused', 's3://payroll', true]);

      // Nothing changed: a second run reports nothing new and resolves nothing.
      const same = await evaluateDetectors(h.store, t);
      assert.deepEqual([same.reported.length, same.resolved.length, same.repeated], [0, 0, 3]);

      // A grant now covers the secrets access, and payroll is read: both drifts disappear.
      await upsertGrants(h.store, t, [
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 's3://secrets' }, mode: 'rw', source: 'iam' },
      ]);
      await ingestObservations(h.store, t, [obs({ kind: 'agent', id: a.id }, 's3://payroll', 'r')]);
      const fixed = await evaluateDetectors(h.store, t);
      assert.deepEqual(fixed.resolved.map((f) => f.rule_id).sort(), [DRIFT_UNEXPECTED_RULE, DRIFT_UNUSED_RULE]);
      const now = await findings(t);
      assert.deepEqual(now.filter((f) => f.status === 'open').map((f) => f.message.split(' (')[0]), ['agent "coder" accessed s3://logs']);
      const resolved = now.find((f) => f.id === unused.id) as Finding;
      assert.deepEqual([resolved.status, resolved.status_by], ['resolved', 'system']);

      // The grant is withdrawn: the same drift is back, as the same finding, open again.
      await revokeGrants(h.store, t, [{ origin: { kind: 'agent', id: a.id }, resource: { ref: 's3://secrets' }, mode: 'rw' }]);
      const back = await evaluateDetectors(h.store, t);
      const secrets = all.find((f) => f.message.includes('s3://secrets')) as Finding;
      assert.deepEqual(back.reported.map((f) => [f.id, f.status]), [[secrets.id, 'open']]);
    });

    it('an escalation path is a finding with the path as evidence; it resolves when a hop is withdrawn; suppression is kept', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'A' });
      const bb = await createAgent(h.store, t, { name: 'B' });
      const [bot] = await writeNodes(h.store, t, [{ kind: 'identity', ref: 'deploy-bot' }]);
      await writeNodes(h.store, t, [
        { kind: 'resource', ref: 'cfg', class: 'config' },
        { kind: 'resource', ref: 'key', class: 'credential', parent_id: bot?.id },
      ]);
      // A writes config that B reads; B reads deploy-bot's key: A → B → deploy-bot.
      await upsertGrants(h.store, t, [
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 'cfg' }, mode: 'rw', source: 'iam' },
        { origin: { kind: 'agent', id: bb.id }, resource: { ref: 'key' }, mode: 'r', source: 'iam' },
        { origin: { kind: 'agent', id: bb.id }, resource: { ref: 'cfg' }, mode: 'r', source: 'iam' },
      ]);
      const run = await evaluateDetectors(h.store, t);
      assert.deepEqual(run.escalation, { agents: 2, paths: 3, complete: true });
      const esc = (await findings(t)).filter((f) => f.rule_id === ESCALATION_RULE);
      assert.deepEqual(
        esc
          .map((f) =>
            f.subject_ref
              .replace(a.id, 'A')
              .replace(bb.id, 'B')
              .replace(bot?.id as string, 'bot'),
          )
          .sort(),
        ['agent:A -> agent:B', 'agent:A -> identity:bot', 'agent:B -> identity:bot'],
      );
      const toBot = esc.find((f) => f.subject_ref === `agent:${a.id} -> identity:${bot?.id}`) as Finding;
      const ev = JSON.parse((await getFindingRow(h.store, t, toBot.id)).evidence) as {
        path: { length: number; hops: Array<{ via: string }> };
      };
      assert.deepEqual([ev.path.length, ev.path.hops.map((x) => x.via)], [2, ['writes', 'credential']]);
      const bToBot = esc.find((f) => f.subject_ref.startsWith(`agent:${bb.id}`)) as Finding;
      await triageFinding(h.store, t, bToBot.id, { status: 'suppressed', note: 'break-glass account' }, 'user:u');

      // A no longer writes the config: A's paths are gone, B's stays (suppressed, untouched).
      await revokeGrants(h.store, t, [{ origin: { kind: 'agent', id: a.id }, resource: { ref: 'cfg' }, mode: 'rw' }]);
      const after = await evaluateDetectors(h.store, t);
      assert.deepEqual(
        after.resolved
          .filter((f) => f.rule_id === ESCALATION_RULE)
          .map((f) => f.subject_ref.split(' -> ')[1]?.split(':')[0])
          .sort(),
        ['agent', 'identity'],
      );
      // The withdrawn grant was never used: its unused-grant drift finding resolves with it.
      assert.deepEqual(
        after.resolved.filter((f) => f.rule_id === DRIFT_UNUSED_RULE).map((f) => f.message.split(' that ')[0]),
        ['agent "A" holds a rw grant on cfg'],
      );
      const now = (await findings(t)).filter((f) => f.rule_id === ESCALATION_RULE);
      assert.deepEqual(now.map((f) => [f.id === bToBot.id, f.status]).sort(), [
        [false, 'resolved'],
        [false, 'resolved'],
        [true, 'suppressed'],
      ]);
    });

    it('a walk or search cut short by its bounds proves no absence: nothing is resolved from it', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'A' });
      const bb = await createAgent(h.store, t, { name: 'B' });
      await writeNodes(h.store, t, [{ kind: 'resource', ref: 'cfg', class: 'config' }]);
      // The path rests on grants only (A writes cfg, B reads it); drift comes from two observations.
      await upsertGrants(h.store, t, [
        { origin: { kind: 'agent', id: a.id }, resource: { ref: 'cfg' }, mode: 'rw', source: 'iam' },
        { origin: { kind: 'agent', id: bb.id }, resource: { ref: 'cfg' }, mode: 'r', source: 'iam' },
      ]);
      await ingestObservations(h.store, t, [obs({ kind: 'agent', id: a.id }, 'r1', 'r'), obs({ kind: 'agent', id: a.id }, 'r2', 'r')]);
      await evaluateDetectors(h.store, t);
      const open = async (rule: string) => (await findings(t)).filter((f) => f.rule_id === rule && f.status === 'open').length;
      assert.deepEqual([await open(ESCALATION_RULE), await open(DRIFT_UNEXPECTED_RULE), await open(DRIFT_UNUSED_RULE)], [1, 2, 2]);
      // The path and two drifts go away, but the runs look at one drift item and one agent only.
      await upsertGrants(h.store, t, [{ origin: { kind: 'agent', id: a.id }, resource: { ref: 'r1' }, mode: 'r', source: 'iam' }]);
      await revokeGrants(h.store, t, [{ origin: { kind: 'agent', id: a.id }, resource: { ref: 'cfg' }, mode: 'rw' }]);
      const cut = await evaluateDetectors(h.store, t, { ...DEFAULT_DETECTOR_BOUNDS, maxDrift: 1, maxAgents: 1 });
      assert.deepEqual([cut.drift.complete, cut.escalation.complete, cut.resolved.length], [false, false, 0]);
      // A complete run then resolves what is gone.
      const full = await evaluateDetectors(h.store, t);
      assert.deepEqual([full.drift.complete, full.escalation.complete], [true, true]);
      assert.deepEqual(full.resolved.map((f) => f.rule_id).sort(), [ESCALATION_RULE, DRIFT_UNEXPECTED_RULE, DRIFT_UNUSED_RULE]);
      assert.deepEqual([await open(ESCALATION_RULE), await open(DRIFT_UNEXPECTED_RULE), await open(DRIFT_UNUSED_RULE)], [0, 1, 1]);
    });

    it('a run over a drift set of several steps stores every finding and hands each step’s findings to its transaction', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'bulk' });
      const n = 530;
      await ingestObservations(
        h.store,
        t,
        Array.from({ length: n }, (_, i) => obs({ kind: 'agent', id: a.id }, `s3://bulk/${i}`, 'r')),
      );
      const perTx: number[] = [];
      const run = await evaluateDetectors(h.store, t, DEFAULT_DETECTOR_BOUNDS, (_tx, o) => void perTx.push(o.reported.length));
      assert.deepEqual([run.reported.length, run.drift], [n, { items: n, complete: true }]);
      assert.equal(perTx.reduce((x, y) => x + y, 0), n, 'every reported finding went through a transaction callback once');
      assert.ok(perTx.length > 2, `the writes were split into steps (${perTx.length} transactions)`);
      assert.equal((await listFindings(h.store, t, { source: 'detector', limit: 1000 })).items.length, n);
      const again = await evaluateDetectors(h.store, t);
      assert.deepEqual([again.reported.length, again.resolved.length, again.repeated], [0, 0, n]);
    });

    it('a paced background run lets timers and sockets run between its steps; an aborted one stops before it writes', async () => {
      const t = await addTenant(h.store);
      const a = await createAgent(h.store, t, { name: 'paced' });
      await ingestObservations(
        h.store,
        t,
        Array.from({ length: 400 }, (_, i) => obs({ kind: 'agent', id: a.id }, `s3://paced/${i}`, 'r')),
      );
      // A timer due at once can only fire if the run leaves the microtask queue between its queries.
      let fired = 0;
      const tick = setInterval(() => fired++, 0);
      try {
        await evaluateDetectors(h.store, t, DEFAULT_DETECTOR_BOUNDS, undefined, new Pacer(1));
      } finally {
        clearInterval(tick);
      }
      assert.ok(fired > 0, 'the event loop turned during the run');

      const other = await addTenant(h.store);
      const b = await createAgent(h.store, other, { name: 'stopped' });
      await ingestObservations(h.store, other, [obs({ kind: 'agent', id: b.id }, 's3://stopped', 'r')]);
      const stop = new AbortController();
      stop.abort(new Error('the server is stopping'));
      await assert.rejects(evaluateDetectors(h.store, other, DEFAULT_DETECTOR_BOUNDS, undefined, new Pacer(3, stop.signal)), /stopping/);
      assert.equal((await findings(other)).length, 0, 'nothing was written by the aborted run');
    });

    it('another tenant’s graph is not evaluated into this tenant', async () => {
      const t = await addTenant(h.store);
      const o = await addTenant(h.store);
      const a = await createAgent(h.store, o, { name: 'elsewhere' });
      await ingestObservations(h.store, o, [obs({ kind: 'agent', id: a.id }, 'x', 'r')]);
      const run = await evaluateDetectors(h.store, t);
      assert.deepEqual([run.reported.length, run.drift.items], [0, 0]);
      assert.equal((await findings(o)).length, 0, 'nothing was evaluated in the other tenant either');
    });
  });
}
