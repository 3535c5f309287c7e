/**
 * Legal holds named by reference, over HTTPS on both stores (issue 47 item 8; DECISIONS.md Wave 3):
 * a hold placed by an agent's name or external id, a user's e-mail, a workspace's or an API key's name is stored
 * by the record's id, and the guards compare ids: the agent's delete is 409 `legal_hold` whatever
 * name the hold was placed with; a typo is 404 naming the close name and stores nothing; a name two
 * agents share is 409 `ambiguous`; the check by name answers for the record, and a check of a
 * reference that names nothing is 404, never `held: false`; an erasure registered by e-mail stores
 * the user's id and is refused under a hold placed by that e-mail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../helpers/server.js';
import { moduleDeployment, serveBackends, type Send } from '../../helpers/serve-stores.js';

const C = '/v1/m/compliance';

for (const b of await serveBackends()) {
  describe(`${b.backend}: legal holds resolve their subject to its id`, { skip: b.skip }, () => {
    let server: TestServer;
    let owner: string;
    let viewer: string;
    let send: Send;
    let tenant: string;
    const agent = async (name: string, external_id?: string): Promise<string> => {
      const res = await send(owner, 'POST', '/v1/agents', { name, ...(external_id ? { external_id } : {}) });
      assert.equal(res.status, 201, res.text);
      return res.json().id as string;
    };
    const hold = (subject_kind: string, subject_ref: string) =>
      send(owner, 'POST', `${C}/holds`, { subject_kind, subject_ref, matter: 'Acme v. Example', reason: 'litigation' });
    const refs = async () =>
      ((await send(owner, 'GET', `${C}/holds?limit=1000`)).json().items as Array<{ subject_ref: string }>).map((h) => h.subject_ref);

    before(async () => {
      const d = await moduleDeployment(b, { custodian: 'editor', viewer: 'viewer' });
      ({ server, send, tenant } = d);
      owner = d.tokens['owner']!;
      viewer = d.tokens['viewer']!;
    });
    after(async () => server?.stop());

    it('by name → stored by id, and the agent delete is 409 legal_hold; by external id the same; check by name answers held', async () => {
      const id = await agent('payments-copilot');
      const placed = await hold('agent', 'payments-copilot');
      assert.equal(placed.status, 201, placed.text);
      assert.equal(placed.json().subject_ref, id);
      assert.equal(placed.json().status, 'active');
      const del = await send(owner, 'DELETE', `/v1/agents/${id}`);
      assert.equal(del.status, 409, del.text);
      assert.equal(del.json().error.code, 'legal_hold');
      assert.equal((await send(owner, 'GET', `/v1/agents/${id}`)).status, 200, 'still there');
      const check = await send(owner, 'GET', `${C}/holds/check?subject_kind=agent&subject_ref=payments-copilot`);
      assert.deepEqual(check.json(), { held: true, holds: [placed.json().id] });
      const ext = await agent('ledger-copilot', 'ext-ledger');
      assert.equal((await hold('agent', 'ext-ledger')).json().subject_ref, ext);
      assert.equal((await send(owner, 'DELETE', `/v1/agents/${ext}`)).json().error.code, 'legal_hold');
      const free = await agent('free-copilot');
      assert.equal((await send(owner, 'GET', `${C}/holds/check?subject_kind=agent&subject_ref=free-copilot`)).json().held, false);
      assert.equal((await send(owner, 'DELETE', `/v1/agents/${free}`)).status, 204);
    });

    it('a typo is 404 with the close name and stores nothing; check of a typo is 404; two agents of a name are 409 ambiguous', async () => {
      await agent('billing-copilot');
      const before = await refs();
      const typo = await hold('agent', 'biling-copilot');
      assert.equal(typo.status, 404, typo.text);
      assert.match(typo.json().error.message, /did you mean "billing-copilot"/);
      const check = await send(owner, 'GET', `${C}/holds/check?subject_kind=agent&subject_ref=biling-copilot`);
      assert.equal(check.status, 404, 'a reference naming nothing is not "held: false"');
      const a = await agent('twin-copilot');
      const b2 = await agent('twin-copilot');
      const twins = await hold('agent', 'twin-copilot');
      assert.equal(twins.status, 409, twins.text);
      assert.equal(twins.json().error.code, 'ambiguous');
      assert.ok(twins.json().error.message.includes(a) && twins.json().error.message.includes(b2));
      assert.deepEqual(await refs(), before, 'nothing stored');
    });

    it('a user by e-mail and a workspace by name are stored by id; an erasure by e-mail is refused under that hold', async () => {
      const users = (await send(owner, 'GET', '/v1/users?limit=1000')).json().items as Array<{ id: string; email: string }>;
      const custodian = users.find((u) => u.email === 'custodian@example.test')!.id;
      const byMail = await hold('user', 'Custodian@Example.test');
      assert.equal(byMail.status, 201, byMail.text);
      assert.equal(byMail.json().subject_ref, custodian);
      // A viewer may check a user by id only: an e-mail (and its close names) is for those who may read users.
      const check = (token: string, ref: string) =>
        send(token, 'GET', `${C}/holds/check?subject_kind=user&subject_ref=${encodeURIComponent(ref)}`);
      assert.equal((await check(viewer, 'custodian@example.test')).status, 400);
      assert.equal((await check(viewer, custodian)).json().held, true);
      assert.equal((await check(owner, 'custodian@example.test')).json().held, true);
      assert.equal((await check(owner, 'custodain@example.test')).status, 404);
      const near = await hold('user', 'custodain@example.test');
      assert.equal(near.status, 404);
      assert.match(near.json().error.message, /did you mean "custodian@example.test"/);
      const ws = await send(owner, 'POST', '/v1/workspaces', { root_path: '/srv/held', display_name: 'held-ws' });
      assert.equal(ws.status, 201, ws.text);
      assert.equal((await hold('workspace', 'held-ws')).json().subject_ref, ws.json().id);
      assert.equal((await hold('workspace', '/srv/held')).json().subject_ref, ws.json().id);
      const key = await send(owner, 'POST', '/v1/tokens', { name: 'ci-key', role: 'viewer', tenant });
      assert.equal(key.status, 201, key.text);
      assert.equal((await hold('token', 'ci-key')).json().subject_ref, key.json().id);
      const revoke = await send(owner, 'DELETE', `/v1/tokens/${key.json().id}`);
      assert.equal(revoke.status, 409, revoke.text);
      assert.equal(revoke.json().error.code, 'legal_hold');
      assert.equal((await hold('token', 'ci-kye')).status, 404);
      // A kind svc keeps no record of is stored as given.
      assert.equal((await hold('customer', 'ACME-42')).json().subject_ref, 'ACME-42');
      const reg = await send(owner, 'POST', `${C}/erasure`, { case_ref: 'DSR-9', subject_ref: 'custodian@example.test' });
      assert.equal(reg.status, 201, reg.text);
      assert.equal(reg.json().subject_ref, custodian);
      const refused = await send(owner, 'POST', `${C}/erasure/${reg.json().id}/execute`, {});
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.json().error.code, 'legal_hold');
    });
  });
}
