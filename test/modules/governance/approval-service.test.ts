/**
 * Approvals under dual control on both stores: distinct people (one person's session and API key
 * count once), the requester cannot decide, single use, expiry, a changed plan invalidates, every
 * step a ledger record, the events on the bus, and another tenant's approval is 404.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  cancelApproval,
  consumeApproval,
  decideApproval,
  gateOnApproval,
  getApproval,
  listApprovals,
  listDecisions,
  planHash,
  requestApproval,
} from '../../../src/modules/governance/approval-service.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { drain, govHarness, type GovHarness } from './harness.js';

const plan = { action: 'compliance.erasure.execute', subject: 'erasure/42', params: { user: 'u-1', scope: ['audit', 'sessions'] } };

for (const b of await testStores()) {
  describe(`${b.backend}: approvals under dual control`, { skip: b.skip }, () => {
    let h: TestStore;
    let tenant: string;
    let g: GovHarness;
    const requester = randomUUID();
    const ana = randomUUID();
    const bo = randomUUID();
    before(async () => {
      h = await b.create({ sqliteSynchronous: 'normal' });
      await h.store.migrate();
      tenant = await addTenant(h.store);
      g = govHarness(h.store, tenant);
    });
    after(async () => h?.dispose());

    const actions = () => g.audit.appended.map((a) => a.draft.action);

    it('plan_hash is the hex SHA-256 of the RFC 8785 canonical JSON of {action, subject, params}', () => {
      // Key order does not matter (canonical JSON sorts keys); a changed param does.
      const a = planHash({ action: 'x', subject: 's', params: { b: 1, a: [true, 'é'] } });
      assert.equal(a, planHash({ subject: 's', params: { a: [true, 'é'], b: 1 }, action: 'x' }));
      assert.notEqual(a, planHash({ action: 'x', subject: 's', params: { b: 2, a: [true, 'é'] } }));
      // Known vector: sha256('{"action":"x","params":{},"subject":"s"}')
      assert.equal(
        planHash({ action: 'x', subject: 's' }),
        createHash('sha256').update('{"action":"x","params":{},"subject":"s"}').digest('hex'),
      );
    });

    it('one person with a session and an API key cannot reach a quorum of two; a second person can', async () => {
      const before = g.audit.appended.length;
      const a = await requestApproval(g.as(requester), plan);
      assert.equal(a.status, 'pending');
      assert.equal(a.quorum, 2);
      assert.equal(a.plan_hash, planHash(plan));
      const first = await decideApproval(g.as(ana, 'user'), a.id, { decision: 'approve', reason: 'looks right' });
      assert.equal(first.approval.status, 'pending');
      assert.equal(first.approval.approvals, 1);
      // Same person, another credential (an API key): refused, and the count does not move.
      await assert.rejects(decideApproval(g.as(ana, 'token'), a.id, { decision: 'approve', reason: 'again' }), {
        code: 'conflict',
        status: 409,
      });
      assert.equal((await getApproval(h.store, tenant, a.id)).approvals, 1);
      assert.equal((await getApproval(h.store, tenant, a.id)).status, 'pending');
      await assert.rejects(consumeApproval(g.as(requester), a.id, plan), { code: 'approval_required', status: 409 });
      const second = await decideApproval(g.as(bo, 'token'), a.id, { decision: 'approve', reason: 'ok' });
      assert.equal(second.approval.status, 'approved');
      assert.equal(second.approval.approvals, 2);
      assert.deepEqual((await listDecisions(h.store, tenant, a.id)).map((d) => d.user_id), [ana, bo]);
      assert.deepEqual(actions().slice(before), ['approval.request', 'approval.decide', 'approval.decide', 'approval.resolve']);
      await drain();
      assert.ok(g.events.some((e) => e.type === 'approval.requested' && e.subject === `approval/${a.id}`));
      assert.ok(
        g.events.some((e) => e.type === 'approval.resolved' && e.data['status'] === 'approved' && e.subject === `approval/${a.id}`),
      );
    });

    it('the requester cannot decide their own request, with any credential', async () => {
      const a = await requestApproval(g.as(requester), plan);
      await assert.rejects(decideApproval(g.as(requester, 'user'), a.id, { decision: 'approve', reason: 'mine' }), {
        code: 'forbidden',
        status: 403,
      });
      await assert.rejects(decideApproval(g.as(requester, 'token'), a.id, { decision: 'approve', reason: 'mine' }), {
        code: 'forbidden',
        status: 403,
      });
      assert.deepEqual(await listDecisions(h.store, tenant, a.id), []);
    });

    it('single use: consumed once for exactly the approved plan; a changed plan is approval_invalid', async () => {
      const a = await requestApproval(g.as(requester), { ...plan, quorum: 1 } as never);
      await decideApproval(g.as(ana), a.id, { decision: 'approve', reason: 'ok' });
      await assert.rejects(consumeApproval(g.as(requester), a.id, { ...plan, params: { ...plan.params, user: 'u-2' } }), {
        code: 'approval_invalid',
        status: 409,
      });
      await assert.rejects(consumeApproval(g.as(requester), a.id, { plan_hash: '0'.repeat(64) }), { code: 'approval_invalid' });
      const used = await consumeApproval(g.as(requester), a.id, plan);
      assert.equal(used.status, 'consumed');
      await assert.rejects(consumeApproval(g.as(requester), a.id, plan), { code: 'approval_invalid', status: 409 });
      assert.equal(actions().at(-1), 'approval.consume');
      // Two concurrent consumers of one approval: exactly one wins.
      const c = await requestApproval(g.as(requester), { ...plan, quorum: 1 } as never);
      await decideApproval(g.as(bo), c.id, { decision: 'approve', reason: 'ok' });
      const results = await Promise.allSettled([1, 2, 3, 4].map(() => consumeApproval(g.as(requester), c.id, { plan_hash: c.plan_hash })));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    });

    it('an expired approval cannot be consumed nor decided', async () => {
      const a = await requestApproval(g.as(requester), { ...plan, quorum: 1 } as never);
      await decideApproval(g.as(ana), a.id, { decision: 'approve', reason: 'ok' });
      // Move its expiry into the past, as time would.
      await h.admin.query(
        b.backend === 'postgres'
          ? 'update gov_approvals set expires_at = $1 where id = $2'
          : 'update gov_approvals set expires_at = ? where id = ?',
        ['2020-01-01T00:00:00.000000000Z', a.id],
      );
      assert.equal((await getApproval(h.store, tenant, a.id)).status, 'expired');
      await assert.rejects(consumeApproval(g.as(requester), a.id, plan), { code: 'approval_invalid', status: 409 });
      const p = await requestApproval(g.as(requester), plan);
      await h.admin.query(
        b.backend === 'postgres'
          ? 'update gov_approvals set expires_at = $1 where id = $2'
          : 'update gov_approvals set expires_at = ? where id = ?',
        ['2020-01-01T00:00:00.000000000Z', p.id],
      );
      await assert.rejects(decideApproval(g.as(ana), p.id, { decision: 'approve', reason: 'late' }), { code: 'approval_invalid' });
      assert.ok((await listApprovals(h.store, tenant, { limit: 100, status: 'expired' })).items.some((x) => x.id === p.id));
    });

    it('one rejection rejects; a cancelled approval cannot be used; the gate opens a request and then consumes it', async () => {
      const a = await requestApproval(g.as(requester), plan);
      const r = await decideApproval(g.as(ana), a.id, { decision: 'reject', reason: 'no' });
      assert.equal(r.approval.status, 'rejected');
      await assert.rejects(consumeApproval(g.as(requester), a.id, plan), { code: 'approval_invalid' });
      const c = await requestApproval(g.as(requester), plan);
      assert.equal((await cancelApproval(g.as(requester), c.id, 'not needed')).status, 'cancelled');
      await assert.rejects(consumeApproval(g.as(requester), c.id, plan), { code: 'approval_invalid' });
      const gate = await gateOnApproval(g.as(requester), plan, undefined, { quorum: 1 });
      assert.ok('pending' in gate);
      await decideApproval(g.as(bo), gate.pending.id, { decision: 'approve', reason: 'ok' });
      const done = await gateOnApproval(g.as(requester), plan, gate.pending.id);
      assert.ok('consumed' in done && done.consumed.status === 'consumed');
    });

    it("another tenant's approval is 404", async () => {
      const a = await requestApproval(g.as(requester), plan);
      const other = await addTenant(h.store);
      const og = govHarness(h.store, other);
      await assert.rejects(getApproval(h.store, other, a.id), { code: 'not_found', status: 404 });
      await assert.rejects(decideApproval(og.as(ana), a.id, { decision: 'approve', reason: 'x' }), { code: 'not_found' });
      await assert.rejects(consumeApproval(og.as(requester), a.id, plan), { code: 'not_found' });
    });
  });
}
