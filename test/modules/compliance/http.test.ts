/**
 * The compliance routes over HTTPS against the real `svc serve` (durable ledger, real authenticator,
 * the governance approval service), on both stores: the legal hold and erasure state tables, dual
 * control (the same person twice is not a quorum), the hold as a veto on exactly the agent delete it
 * covers, custody events tied to ledger records, the ledger still verifying, bad input as the
 * error envelope and another tenant's record as 404.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, type TestServer } from '../../helpers/server.js';
import { moduleDeployment, serveBackends, type Send } from '../../helpers/serve-stores.js';

for (const b of await serveBackends()) {
  let server: TestServer;
  let owner: string;
  let tenant: string;
  let otherTenant: string;
  let editorSession: string;
  let editorKey: string;
  let thirdSession: string;

  let send: Send;

  const C = '/v1/m/compliance';
  const approve = async (token: string, approvalId: string) =>
    send(token, 'POST', `/v1/m/governance/approvals/${approvalId}/decisions`, { decision: 'approve', reason: 'checked' });
  const agent = async (name: string): Promise<string> => {
    const res = await send(owner, 'POST', '/v1/agents', { name });
    assert.equal(res.status, 201, res.text);
    return res.json().id as string;
  };
  const placeOn = async (agentId: string) => {
    const res = await send(owner, 'POST', `${C}/holds`, {
      subject_kind: 'agent',
      subject_ref: agentId,
      matter: 'Acme v. Example',
      reason: 'litigation',
    });
    assert.equal(res.status, 201, res.text);
    return res.json() as { id: string; status: string };
  };

  describe(`${b.backend}: compliance over HTTPS`, { skip: b.skip }, () => {
    before(async () => {
      const d = await moduleDeployment(b, { editor: 'editor', third: 'editor' });
      ({ server, tenant, otherTenant, send } = d);
      owner = d.tokens['owner']!;
      editorSession = d.tokens['editor']!;
      thirdSession = d.tokens['third']!;
      const k = await send(editorSession, 'POST', '/v1/tokens', { name: 'k-editor', role: 'editor', tenant });
      assert.equal(k.status, 201, k.text);
      editorKey = k.json().token as string;
    });
    after(async () => {
      await server?.stop();
    });

    it(
      'hold: place → active; release without quorum stays active; the ' +
        'same person twice is not quorum; with quorum → released; then 409',
      async () => {
        const held = await agent('held-1');
        const hold = await placeOn(held);
        assert.equal(hold.status, 'active');
        const listed = await send(owner, 'GET', `${C}/holds?status=active`);
        assert.ok(listed.json().items.some((h: { id: string }) => h.id === hold.id));
        const check = await send(owner, 'GET', `${C}/holds/check?subject_kind=agent&subject_ref=${held}`);
        assert.equal(check.status, 200, check.text);
        assert.deepEqual(check.json(), { held: true, holds: [hold.id] });

        const opened = await send(owner, 'POST', `${C}/holds/${hold.id}/release`, { reason: 'matter settled' });
        assert.equal(opened.status, 202, opened.text);
        assert.equal(opened.json().status, 'pending_approval');
        const approvalId = opened.json().approval_id as string;
        // The requester cannot approve their own request.
        assert.equal((await approve(owner, approvalId)).status, 403);
        assert.equal((await approve(editorSession, approvalId)).status, 201);
        // The same person with another credential is refused: one person, one decision.
        const twice = await approve(editorKey, approvalId);
        assert.equal(twice.status, 409, twice.text);
        assert.equal(twice.json().error.code, 'conflict');
        const early = await send(owner, 'POST', `${C}/holds/${hold.id}/release`, { approval_id: approvalId });
        assert.equal(early.status, 409, early.text);
        assert.equal(early.json().error.code, 'approval_required');
        assert.equal((await send(owner, 'GET', `${C}/holds/${hold.id}`)).json().status, 'active');
        assert.equal((await send(owner, 'DELETE', `/v1/agents/${held}`)).json().error.code, 'legal_hold');

        assert.equal((await approve(thirdSession, approvalId)).json().approval.status, 'approved');
        const released = await send(owner, 'POST', `${C}/holds/${hold.id}/release`, { approval_id: approvalId });
        assert.equal(released.status, 200, released.text);
        assert.equal(released.json().status, 'released');
        assert.equal(released.json().release_approval_id, approvalId);
        const again = await send(owner, 'POST', `${C}/holds/${hold.id}/release`, {});
        assert.equal(again.status, 409, again.text);
        assert.equal((await send(owner, 'GET', `${C}/holds?status=released`)).json().items[0].id, hold.id);
        assert.deepEqual((await send(owner, 'GET', `${C}/holds/check?subject_kind=agent&subject_ref=${held}`)).json(), {
          held: false,
          holds: [],
        });

        // The custody chain: each step with its ledger record and the people involved.
        const events = (await send(owner, 'GET', `${C}/holds/${hold.id}/events`)).json().items as Array<{
          event: string;
          ledger_seq: number;
          ledger_hash: string;
          people: string[];
        }>;
        assert.deepEqual(
          events.map((e) => e.event),
          ['placed', 'release_requested', 'approved', 'released'],
        );
        assert.equal(events[2]!.people.length, 3, 'requester and two approvers');
        const audit = (await send(owner, 'GET', '/v1/audit?limit=1000')).json().items as Array<{
          seq: number;
          hash: string;
          action: string;
          target_id: string;
        }>;
        for (const e of events)
          assert.ok(
            audit.some((r) => Number(r.seq) === e.ledger_seq && r.hash === e.ledger_hash && r.target_id === hold.id),
            `${e.event} in the ledger`,
          );
        // Released: the delete goes through.
        assert.equal((await send(owner, 'DELETE', `/v1/agents/${held}`)).status, 204);
        assert.equal((await send(owner, 'GET', `${C}/holds/${hold.id}`, undefined, otherTenant)).status, 404);
      },
    );

    it('a subject hold blocks the delete of the agent it covers and not another agent', async () => {
      const covered = await agent('covered');
      const free = await agent('free');
      await placeOn(covered);
      const refused = await send(owner, 'DELETE', `/v1/agents/${covered}`);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.json().error.code, 'legal_hold');
      assert.equal((await send(owner, 'GET', `/v1/agents/${covered}`)).status, 200, 'still there');
      assert.equal((await send(owner, 'DELETE', `/v1/agents/${free}`)).status, 204);
      // A hold on another kind with the same ref, or a data-class hold, does not cover the agent.
      const other = await agent('other-kind');
      assert.equal(
        (await send(owner, 'POST', `${C}/holds`, { subject_kind: 'customer', subject_ref: other, matter: 'm', reason: 'r' })).status,
        201,
      );
      assert.equal(
        (await send(owner, 'POST', `${C}/holds`, { scope: 'data_class', data_class: 'hr', matter: 'm', reason: 'r' })).status,
        201,
      );
      assert.equal((await send(owner, 'DELETE', `/v1/agents/${other}`)).status, 204);
    });

    it(
      'erasure: registering destroys nothing; execute under a covering hold is refused; with quorum → completed with a receipt; the ' +
        'ledger verifies',
      async () => {
        const victim = await agent('person-agent');
        const reg = await send(owner, 'POST', `${C}/erasure`, {
          case_ref: 'DSR-1',
          subject_kind: 'agent',
          subject_ref: victim,
          aliases: ['alias-1'],
          reason: 'art. 17',
        });
        assert.equal(reg.status, 201, reg.text);
        const e = reg.json();
        assert.equal(e.status, 'received');
        assert.equal(e.subject_kind, 'agent');
        assert.equal((await send(owner, 'GET', `/v1/agents/${victim}`)).status, 200, 'registering destroyed nothing');
        assert.equal((await send(owner, 'GET', `${C}/erasure/${e.id}/receipt`)).status, 409);

        // Placed by the agent's name, stored by its id: it covers the erasure, registered by id.
        const hold = await send(owner, 'POST', `${C}/holds`, {
          subject_kind: 'agent',
          subject_ref: 'person-agent',
          matter: 'm',
          reason: 'covers the subject',
        });
        assert.equal(hold.json().subject_ref, victim);
        const refused = await send(owner, 'POST', `${C}/erasure/${e.id}/execute`, {});
        assert.equal(refused.status, 409, refused.text);
        assert.equal(refused.json().error.code, 'legal_hold');
        assert.equal((await send(owner, 'GET', `${C}/erasure/${e.id}`)).json().status, 'received');

        // Release that hold under dual control, then execute.
        const rel = (await send(owner, 'POST', `${C}/holds/${hold.json().id}/release`, {})).json().approval_id as string;
        await approve(editorSession, rel);
        await approve(thirdSession, rel);
        assert.equal((await send(owner, 'POST', `${C}/holds/${hold.json().id}/release`, { approval_id: rel })).json().status, 'released');

        const pending = await send(owner, 'POST', `${C}/erasure/${e.id}/execute`, {});
        assert.equal(pending.status, 202, pending.text);
        const approvalId = pending.json().approval_id as string;
        assert.equal((await send(owner, 'GET', `${C}/erasure/${e.id}`)).json().status, 'pending_approval');
        await approve(editorSession, approvalId);
        const early = await send(owner, 'POST', `${C}/erasure/${e.id}/execute`, { approval_id: approvalId });
        assert.equal(early.json().error.code, 'approval_required');
        await approve(thirdSession, approvalId);
        const done = await send(owner, 'POST', `${C}/erasure/${e.id}/execute`, { approval_id: approvalId });
        assert.equal(done.status, 200, done.text);
        assert.equal(done.json().status, 'completed');
        const receipt = await send(owner, 'GET', `${C}/erasure/${e.id}/receipt`);
        assert.equal(receipt.status, 200, receipt.text);
        assert.equal(receipt.json().approval_id, approvalId);
        assert.equal(receipt.json().approvers.length, 2);
        assert.ok(receipt.json().not_erased.length > 0);
        assert.equal((await send(owner, 'POST', `${C}/erasure/${e.id}/execute`, { approval_id: approvalId })).status, 409);
        const events = (await send(owner, 'GET', `${C}/erasure/${e.id}/events`)).json().items.map((x: { event: string }) => x.event);
        assert.deepEqual(events, ['received', 'refused_legal_hold', 'execution_requested', 'completed']);
        assert.equal((await send(owner, 'GET', `${C}/erasure?status=completed`)).json().items[0].id, e.id);
        // The durable event log (what webhooks and connectors deliver from) holds the release and the erasure, once each.
        const logged = async (type: string) =>
          ((await send(owner, 'GET', `/v1/m/eventing/events?type=${type}&limit=1000`)).json().items as Array<{ data: { id: string } }>).map(
            (x) => x.data.id,
          );
        assert.deepEqual(await logged('erasure.completed'), [e.id]);
        assert.ok((await logged('hold.released')).includes(hold.json().id), 'hold.released is in the event log');
        assert.ok((await logged('hold.placed')).includes(hold.json().id), 'hold.placed is in the event log');
        assert.equal((await send(owner, 'GET', `${C}/erasure/${e.id}`, undefined, otherTenant)).status, 404);
        const verify = await send(owner, 'GET', '/v1/audit/verify');
        assert.equal(verify.status, 200, verify.text);
        assert.equal(verify.json().ok, true, verify.text);
      },
    );

    it('a hold on a user blocks the revoke of that user\'s API keys, and only theirs', async () => {
      const held = await send(owner, 'POST', '/v1/users', {
        email: 'held-user@example.test',
        password: 'a long enough password',
        role: 'editor',
      });
      assert.equal(held.status, 201, held.text);
      const heldId = held.json().id as string;
      const heldSession = (
        await call(server, 'POST', '/v1/auth/login', {
          body: JSON.stringify({ email: 'held-user@example.test', password: 'a long enough password' }),
          headers: { 'content-type': 'application/json' },
        })
      ).json().token as string;
      const heldKey = await send(heldSession, 'POST', '/v1/tokens', { name: 'k-held', role: 'viewer', tenant });
      assert.equal(heldKey.status, 201, heldKey.text);
      const freeKey = await send(thirdSession, 'POST', '/v1/tokens', { name: 'k-free', role: 'viewer', tenant });
      assert.equal(freeKey.status, 201, freeKey.text);
      const hold = await send(owner, 'POST', `${C}/holds`, { subject_kind: 'user', subject_ref: heldId, matter: 'm', reason: 'custodian' });
      assert.equal(hold.status, 201, hold.text);
      const refused = await send(heldSession, 'DELETE', `/v1/tokens/${heldKey.json().id}`);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.json().error.code, 'legal_hold');
      const still = await send(heldSession, 'GET', '/v1/tokens');
      assert.ok(still.json().items.some((t: { id: string }) => t.id === heldKey.json().id), 'the key is still there');
      assert.equal((await send(thirdSession, 'DELETE', `/v1/tokens/${freeKey.json().id}`)).status, 204, 'an unheld user\'s key is revoked');
    });

    it('permissions: an editor reads holds but cannot place or release one', async () => {
      assert.equal((await send(editorSession, 'GET', `${C}/holds`)).status, 200);
      assert.equal(
        (await send(editorSession, 'POST', `${C}/holds`, { subject_kind: 'agent', subject_ref: 'x', matter: 'm', reason: 'r' })).status,
        403,
      );
      assert.equal((await send(editorSession, 'POST', `${C}/erasure`, { case_ref: 'c', subject_ref: 'x' })).status, 403);
    });

    it('bad input is the error envelope, never a 500', async () => {
      const cases: Array<[string, string, string]> = [
        ['POST', `${C}/holds`, '{"matter":'],
        ['POST', `${C}/holds`, JSON.stringify({ matter: 'm', reason: 'r' })],
        ['POST', `${C}/holds`, JSON.stringify({ subject_kind: 'agent', subject_ref: 'x', matter: 'm' })],
        ['POST', `${C}/holds`, JSON.stringify({ subject_kind: 'agent', subject_ref: 'x\u0000', matter: 'm', reason: 'r' })],
        ['POST', `${C}/holds`, JSON.stringify({ scope: 'data_class', matter: 'm', reason: 'r' })],
        ['POST', `${C}/holds`, JSON.stringify({ scope: 'tenant', subject_kind: 'agent', subject_ref: 'x', matter: 'm', reason: 'r' })],
        ['POST', `${C}/holds`, JSON.stringify({ subject_kind: 'agent', subject_ref: 'x', matter: 'm', reason: 'r', extra: 1 })],
        ['GET', `${C}/holds/not-a-uuid`, ''],
        ['GET', `${C}/holds/check`, ''],
        ['GET', `${C}/holds/check?subject_kind=agent`, ''],
        ['GET', `${C}/holds?status=gone`, ''],
        ['POST', `${C}/holds/01890000-0000-7000-8000-000000000000/release`, JSON.stringify({ approval_id: 'nope' })],
        ['POST', `${C}/erasure`, JSON.stringify({ case_ref: 'c' })],
        ['POST', `${C}/erasure`, JSON.stringify({ case_ref: 'c', subject_ref: 's', aliases: 'a' })],
        ['POST', `${C}/erasure/01890000-0000-7000-8000-000000000000/execute`, JSON.stringify({})],
      ];
      for (const [method, p, raw] of cases) {
        const res = await send(owner, method, p, undefined, tenant, raw || undefined);
        assert.ok(res.status >= 400 && res.status < 500, `${method} ${p} ${raw}: ${res.status} ${res.text}`);
        assert.equal(typeof res.json().error.code, 'string');
      }
    });
  });
}
