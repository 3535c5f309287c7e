/**
 * Kill switches named by reference, over HTTPS on both stores (issue 47 item 7; DECISIONS.md Wave 3
 * "References are resolved when written"): a typo is 404 naming the close name and stores nothing;
 * a name or external id is stored as `agent:<id>`; a decision is stopped whatever form the hook
 * sends the agent in (id in any case, external id, name), after a rename too; an ambiguous name is
 * 409 `ambiguous` when engaging and stopped when deciding (fail closed); a reference that names no
 * agent still meets the tenant's switch; an API key is named by id or name and stored by id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../helpers/server.js';
import { moduleDeployment, serveBackends, type Send } from '../../helpers/serve-stores.js';

const G = '/v1/m/governance';
const READ_ANYTHING = '@id("read") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Read");';

for (const b of await serveBackends()) {
  describe(`${b.backend}: kill switches resolve their agent to its id`, { skip: b.skip }, () => {
    let server: TestServer;
    let owner: string;
    let send: Send;
    let tenant: string;
    const agent = async (name: string, external_id?: string): Promise<string> => {
      const res = await send(owner, 'POST', '/v1/agents', { name, ...(external_id ? { external_id } : {}) });
      assert.equal(res.status, 201, res.text);
      return res.json().id as string;
    };
    const decide = async (agentId?: string) => {
      const res = await send(owner, 'POST', `${G}/pep/decisions`, {
        hook_event_name: 'PreToolUse',
        session_id: 's-1',
        tool_name: 'Read',
        tool_input: { file_path: 'x' },
        ...(agentId !== undefined ? { agent_id: agentId } : {}),
      });
      assert.equal(res.status, 200, res.text);
      return res.json() as { decision: string; kill_switch: string | null };
    };
    const engaged = async () =>
      ((await send(owner, 'GET', `${G}/pep/kill-switches`)).json().items as Array<{ scope: string }>).map((k) => k.scope);

    before(async () => {
      const d = await moduleDeployment(b);
      ({ server, send, tenant } = d);
      owner = d.tokens['owner']!;
      assert.equal((await send(owner, 'POST', `${G}/pdp/publish`, { content: READ_ANYTHING })).status, 201);
    });
    after(async () => server?.stop());

    it('a typo is 404 naming the close name, and nothing is stored', async () => {
      await agent('release-bot', 'ext-release');
      const res = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'relase-bot', reason: 'typo' });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.json().error.code, 'not_found');
      assert.match(res.json().error.message, /"relase-bot"; did you mean "release-bot"\?/);
      assert.deepEqual(await engaged(), []);
      const nothingClose = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'zzzzzzzzzzzz' });
      assert.equal(nothingClose.status, 404);
      assert.doesNotMatch(nothingClose.json().error.message, /did you mean/);
      const unknownId = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: '01900000-0000-7000-8000-000000000000' });
      assert.equal(unknownId.status, 404, 'an id that names no agent is not stored either');
      assert.deepEqual(await engaged(), []);
    });

    it('by name → stored by id; decisions by id (any case), external id or name are stopped, after a rename too', async () => {
      const id = await agent('payments-bot', 'ext-payments');
      const other = await agent('other-bot');
      const eng = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'payments-bot', reason: 'incident 47' });
      assert.equal(eng.status, 201, eng.text);
      assert.equal(eng.json().scope, `agent:${id}`);
      assert.deepEqual(await engaged(), [`agent:${id}`]);
      for (const ref of [id, id.toUpperCase(), 'ext-payments', 'payments-bot']) {
        const d = await decide(ref);
        assert.deepEqual([d.decision, d.kill_switch], ['deny', `agent:${id}`], ref);
      }
      assert.deepEqual(
        [(await decide(other)).decision, (await decide('other-bot')).decision, (await decide()).decision],
        ['allow', 'allow', 'allow'],
      );
      const renamed = await send(owner, 'PATCH', `/v1/agents/${id}`, { version: 1, name: 'renamed-bot' });
      assert.equal(renamed.status, 200, renamed.text);
      // The new name is the same agent: stopped at once (the cache drops on agent.updated), at the latest after the cache's second.
      const until = Date.now() + 1500;
      while ((await decide('renamed-bot')).kill_switch === null && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.equal((await decide('renamed-bot')).kill_switch, `agent:${id}`, 'the new name is the same agent');
      assert.equal((await decide('payments-bot')).decision, 'allow', 'the old name names no agent now');
      // Engaging by external id is the same switch (idempotent); release by any form.
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'ext-payments' })).json().scope, `agent:${id}`);
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches/release`, { agent: 'renamed-bot' })).status, 204);
      assert.equal((await decide(id)).decision, 'allow');
      const typo = await send(owner, 'POST', `${G}/pep/kill-switches/release`, { agent: 'renamed-bto' });
      assert.equal(typo.status, 404);
      assert.match(typo.json().error.message, /did you mean "renamed-bot"/);
    });

    it('two agents of one name: engaging by it is 409 ambiguous listing both; a decision naming it is stopped if either is', async () => {
      const a = await agent('twin-bot');
      const b2 = await agent('twin-bot');
      const res = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'twin-bot' });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json().error.code, 'ambiguous');
      assert.ok(res.json().error.message.includes(a) && res.json().error.message.includes(b2), res.text);
      assert.deepEqual(await engaged(), []);
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: b2 })).status, 201);
      assert.deepEqual([(await decide('twin-bot')).kill_switch, (await decide(a)).kill_switch], [`agent:${b2}`, null]);
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches/release`, { agent: b2 })).status, 204);
    });

    it('the tenant switch stops a decision whose agent names nothing; an API key is named by id or name, stored by id', async () => {
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches`, { reason: 'all agents' })).status, 201);
      assert.equal((await decide('no-such-agent')).kill_switch, 'tenant');
      assert.equal((await decide()).kill_switch, 'tenant');
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches/release`, {})).status, 204);
      const key = await send(owner, 'POST', '/v1/tokens', { name: 'hook-key', role: 'editor', tenant });
      assert.equal(key.status, 201, key.text);
      const keyId = key.json().id as string;
      const missing = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'token:01900000-0000-7000-8000-00000000000a' });
      assert.equal(missing.status, 404, 'a key id that names no key is not stored');
      assert.match((await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'token:hook-kye' })).json().error.message, /"hook-key"/);
      const eng = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'token:hook-key' });
      assert.equal(eng.status, 201, eng.text);
      assert.equal(eng.json().scope, `agent:token:${keyId}`);
      // A decision made with that key (the credential's actor) is stopped; one made with the owner's session is not.
      const byKey = await send(key.json().token as string, 'POST', `${G}/pep/decisions`, {
        hook_event_name: 'PreToolUse',
        session_id: 's-2',
        tool_name: 'Read',
        tool_input: { file_path: 'x' },
      });
      assert.deepEqual([byKey.json().decision, byKey.json().kill_switch], ['deny', `agent:token:${keyId}`]);
      assert.equal((await decide()).decision, 'allow');
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches/release`, { agent: `token:${keyId}` })).status, 204);
    });
  });
}
