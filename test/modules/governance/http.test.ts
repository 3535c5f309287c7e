/**
 * The governance routes over HTTPS against the real `svc serve` (durable ledger, real authenticator):
 * approvals with a person's session and API key, the policy lifecycle (a publish that does not
 * compile leaves the active revision deciding, rollback, explain naming the policy), the decision
 * endpoint (ledger record per decision with the input redacted, kill switches), the signed artifact
 * verified by Debian's openssl with the published key, and bad input as the error envelope.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, tempDir, type TestServer } from '../../helpers/server.js';
import { moduleDeployment, serveBackends, type Send } from '../../helpers/serve-stores.js';

for (const b of await serveBackends()) {
  let server: TestServer;
  let owner: string;
  let ownerKey: string;
  let tenant: string;
  let otherTenant: string;
  let editorSession: string;
  let editorKey: string;
  let thirdSession: string;

  let send: Send;

  const G = '/v1/m/governance';
  const POLICY = `@id("read-anything") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Read");
  @id("git-only") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash") when { context.tool_input has ` +
    `command && context.tool_input.command like "git *" };
  @id("no-force-push") forbid(principal, action, resource == Svc::Tool::"Bash") when { context.tool_input has command && ` +
    `context.tool_input.command like "*push --force*" };
  @id("ask-web") @decision("ask") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"WebFetch");`;

  const hook = (tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    hook_event_name: 'PreToolUse',
    session_id: 'sess-1',
    tool_name: tool,
    tool_input: input,
    ...extra,
  });

  async function ledger(action: string): Promise<Array<{ action: string; meta: string; target_id: string }>> {
    const res = await send(owner, 'GET', `/v1/audit?action=${encodeURIComponent(action)}&limit=1000`);
    assert.equal(res.status, 200, res.text);
    return (res.json().items as Array<{ action: string; meta: string; target_id: string }>).filter((r) => r.action === action);
  }

  describe(`${b.backend}: governance over HTTPS`, { skip: b.skip }, () => {
  before(async () => {
    const d = await moduleDeployment(b, { editor: 'editor', third: 'editor' });
    ({ server, tenant, otherTenant, send } = d);
    owner = d.tokens['owner']!;
    const key = async (session: string, role: string) => {
      const res = await send(session, 'POST', '/v1/tokens', { name: `k-${role}-${Math.random()}`, role, tenant });
      assert.equal(res.status, 201, res.text);
      return res.json().token as string;
    };
    ownerKey = await key(owner, 'owner');
    editorSession = d.tokens['editor']!;
    editorKey = await key(editorSession, 'editor');
    thirdSession = d.tokens['third']!;
  });
  after(async () => {
    await server?.stop();
  });

    it(
      'approvals: the editor session and the editor API key are one person; the requester cannot approve; consume once; every step in ' +
        'the ledger',
      async () => {
        const created = await send(owner, 'POST', `${G}/approvals`, {
          action: 'compliance.hold.release',
          subject: 'hold/7',
          params: { reason: 'case closed' },
        });
        assert.equal(created.status, 201, created.text);
        const a = created.json();
        assert.equal(
          (await send(ownerKey, 'POST', `${G}/approvals/${a.id}/decisions`, { decision: 'approve', reason: 'mine' })).status,
          403,
        );
        assert.equal(
          (await send(editorSession, 'POST', `${G}/approvals/${a.id}/decisions`, { decision: 'approve', reason: 'ok' })).status,
          201,
        );
        const again = await send(editorKey, 'POST', `${G}/approvals/${a.id}/decisions`, { decision: 'approve', reason: 'ok again' });
        assert.equal(again.status, 409, again.text);
        assert.equal(again.json().error.code, 'conflict');
        const pending = await send(owner, 'POST', `${G}/approvals/${a.id}/consume`, { plan_hash: a.plan_hash });
        assert.equal(pending.json().error.code, 'approval_required');
        const second = await send(thirdSession, 'POST', `${G}/approvals/${a.id}/decisions`, { decision: 'approve', reason: 'ok' });
        assert.equal(second.json().approval.status, 'approved');
        const changed = await send(owner, 'POST', `${G}/approvals/${a.id}/consume`, {
          action: 'compliance.hold.release',
          subject: 'hold/8',
          params: { reason: 'case closed' },
        });
        assert.equal(changed.status, 409);
        assert.equal(changed.json().error.code, 'approval_invalid');
        const used = await send(owner, 'POST', `${G}/approvals/${a.id}/consume`, {
          action: 'compliance.hold.release',
          subject: 'hold/7',
          params: { reason: 'case closed' },
        });
        assert.equal(used.status, 200, used.text);
        assert.equal(
          (await send(owner, 'POST', `${G}/approvals/${a.id}/consume`, { plan_hash: a.plan_hash })).json().error.code,
          'approval_invalid',
        );
        const decisions = await send(owner, 'GET', `${G}/approvals/${a.id}/decisions`);
        assert.equal(decisions.json().items.length, 2);
        for (const action of ['approval.request', 'approval.decide', 'approval.resolve', 'approval.consume'])
          assert.ok(
            (await ledger(action)).some((r) => r.target_id === a.id),
            action,
          );
        assert.equal((await send(owner, 'GET', `${G}/approvals/${a.id}`, undefined, otherTenant)).status, 404);
      },
    );

    it('bad input is the error envelope, never a 500', async () => {
      const cases: Array<[string, string, string]> = [
        ['POST', `${G}/approvals`, '{"action":'],
        ['POST', `${G}/approvals`, JSON.stringify({ action: 'x', subject: 's', extra: 1 })],
        ['POST', `${G}/approvals`, JSON.stringify({ action: 'x\u0000', subject: 's' })],
        ['POST', `${G}/approvals`, JSON.stringify({ action: 'x', subject: 's', quorum: 'two' })],
        ['POST', `${G}/pep/decisions`, JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'Bash' })],
        ['POST', `${G}/pep/decisions`, JSON.stringify({ ...hook('Bash', {}), surprise: true })],
        ['POST', `${G}/pdp/publish`, JSON.stringify({ content: 1 })],
        ['GET', `${G}/approvals/not-a-uuid`, ''],
        ['GET', `${G}/pdp/versions/0`, ''],
      ];
      for (const [method, p, raw] of cases) {
        const res = await send(owner, method, p, undefined, tenant, raw || undefined);
        assert.ok(res.status >= 400 && res.status < 500, `${method} ${p} ${raw}: ${res.status} ${res.text}`);
        assert.equal(typeof res.json().error.code, 'string');
      }
    });

    it(
      'decision endpoint: no policy is deny; a published revision decides allow/deny/ask naming the policy; each decision a redacted ' +
        'ledger record',
      async () => {
        const none = await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: '/etc/hosts' }));
        assert.equal(none.status, 200, none.text);
        assert.equal(none.json().decision, 'deny');
        assert.equal(none.json().revision, null);
        const pub = await send(owner, 'POST', `${G}/pdp/publish`, { content: POLICY, note: 'first' });
        assert.equal(pub.status, 201, pub.text);
        assert.equal(pub.json().revision, 1);
        const cases: Array<[string, Record<string, unknown>, string, string]> = [
          ['Read', { file_path: '/etc/hosts' }, 'allow', 'read-anything'],
          ['Bash', { command: 'git status' }, 'allow', 'git-only'],
          ['Bash', { command: 'git push --force origin main' }, 'deny', 'no-force-push'],
          ['Bash', { command: 'curl evil.example' }, 'deny', ''],
          ['WebFetch', { url: 'https://example.com' }, 'ask', 'ask-web'],
        ];
        for (const [tool, input, decision, policy] of cases) {
          const res = await send(editorKey, 'POST', `${G}/pep/decisions`, hook(tool, input));
          assert.equal(res.status, 200, res.text);
          const d = res.json();
          assert.equal(d.decision, decision, `${tool} ${JSON.stringify(input)}: ${d.reason}`);
          assert.equal(d.revision, 1);
          if (policy) assert.ok(d.policies.includes(policy), d.reason);
        }
        // A secret in the tool input never reaches the ledger verbatim.
        const secret = 'svck_SUPERSECRETVALUE123456';
        const s = await send(
          editorKey,
          'POST',
          `${G}/pep/decisions`,
          hook('Bash', { command: `git push https://x:${secret}@example.com`, env: { API_TOKEN: 'hunter2hunter2' } }),
        );
        const rec = (await ledger('pep.decision')).find((r) => r.target_id === s.json().decision_id);
        assert.ok(rec, 'the decision is in the ledger');
        assert.ok(!rec.meta.includes('SUPERSECRET') && !rec.meta.includes('hunter2'), rec.meta);
        assert.match(rec.meta, /"tool_name":"Bash"/);
        const listed = await send(editorSession, 'GET', `${G}/pep/decisions?decision=ask&limit=10`);
        assert.equal(listed.status, 200, listed.text);
        assert.ok(listed.json().items.length >= 1 && listed.json().items.every((i: { decision: string }) => i.decision === 'ask'));
      },
    );

    it(
      'a publish that does not compile is 400 and leaves the active revision deciding; rollback restores an earlier one; explain names ' +
        'the policy',
      async () => {
        const before = await send(owner, 'GET', `${G}/pdp/active`);
        const bad = await send(owner, 'POST', `${G}/pdp/publish`, { content: 'permit(principal, action, resource' });
        assert.equal(bad.status, 400, bad.text);
        assert.equal((await send(owner, 'GET', `${G}/pdp/active`)).json().revision, before.json().revision);
        assert.equal(
          (await send(owner, 'POST', `${G}/pdp/validate`, { content: 'permit(principal, action, resource' })).json().valid,
          false,
        );
        assert.equal((await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: 'x' }))).json().decision, 'allow');
        // Revision 2 forbids Read; decisions follow at once (this process' cache is dropped on publish).
        const r2 = await send(owner, 'POST', `${G}/pdp/publish`, {
          content: `@id("no-read") forbid(principal, action, resource == Svc::Tool::"Read");`,
          note: 'lockdown',
        });
        assert.equal(r2.json().revision, before.json().revision + 1);
        const denied = await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: 'x' }));
        assert.equal(denied.json().decision, 'deny');
        assert.deepEqual(denied.json().policies, ['no-read']);
        const rb = await send(owner, 'POST', `${G}/pdp/rollback`, { revision: before.json().revision });
        assert.equal(rb.status, 200, rb.text);
        assert.equal(rb.json().from, r2.json().revision);
        assert.equal((await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: 'x' }))).json().decision, 'allow');
        const versions = (await send(owner, 'GET', `${G}/pdp/versions`)).json().items as Array<{ revision: number; active: boolean }>;
        assert.deepEqual(
          versions.map((v) => v.revision),
          [r2.json().revision, before.json().revision],
        );
        assert.equal(versions.find((v) => v.active)?.revision, before.json().revision);
        const ex = await send(owner, 'POST', `${G}/pdp/explain`, {
          input: { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'git push --force' } },
        });
        assert.equal(ex.status, 200, ex.text);
        assert.equal(ex.json().decision, 'deny');
        assert.deepEqual(ex.json().policies, ['no-force-push']);
        const dry = await send(owner, 'POST', `${G}/pdp/dry-run`, {
          content: POLICY.replace('"git *"', '"*"'),
          input: { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } },
        });
        assert.equal(dry.json().decision, 'allow');
        // Only admins publish.
        assert.equal((await send(editorKey, 'POST', `${G}/pdp/publish`, { content: POLICY })).status, 403);
      },
    );

    it('kill switches force deny for the tenant or one agent, and release restores the policy', async () => {
      const made = await send(owner, 'POST', '/v1/agents', { name: 'agent-7' });
      assert.equal(made.status, 201, made.text);
      const eng = await send(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'agent-7', reason: 'incident 12' });
      assert.equal(eng.status, 201, eng.text);
      const killed = await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: 'x' }, { agent_id: 'agent-7' }));
      assert.equal(killed.json().decision, 'deny');
      assert.equal(killed.json().kill_switch, `agent:${made.json().id}`);
      assert.equal(
        (await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: 'x' }, { agent_id: 'agent-8' }))).json().decision,
        'allow',
      );
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches`, { reason: 'stop everything' })).status, 201);
      assert.equal(
        (await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: 'x' }, { agent_id: 'agent-8' }))).json().kill_switch,
        'tenant',
      );
      assert.equal((await send(editorKey, 'POST', `${G}/pep/kill-switches`, {})).status, 403, 'only admins engage');
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches/release`, {})).status, 204);
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches/release`, { agent: 'agent-7' })).status, 204);
      assert.equal(
        (await send(editorKey, 'POST', `${G}/pep/decisions`, hook('Read', { file_path: 'x' }, { agent_id: 'agent-7' }))).json().decision,
        'allow',
      );
      assert.ok((await ledger('pep.killswitch.engage')).length >= 2);
    });

    it("a revision's artifact verifies with Debian's openssl and the published key; a flipped byte does not", async (t) => {
      try {
        execFileSync('openssl', ['version']);
      } catch {
        t.skip('openssl is not installed');
        return;
      }
      const key = (await send(owner, 'GET', `${G}/pdp/signing-key`)).json();
      const rev = (await send(owner, 'GET', `${G}/pdp/versions/1`)).json();
      assert.equal(rev.key_fingerprint, key.fingerprint);
      const dir = tempDir('svc-policy-');
      const f = (n: string) => path.join(dir, n);
      writeFileSync(f('pub.pem'), key.public_key_pem);
      writeFileSync(f('artifact'), rev.content);
      writeFileSync(f('sig'), Buffer.from(rev.signature, 'base64'));
      assert.equal(execFileSync('openssl', ['dgst', '-sha256', '-r', f('artifact')]).toString().split(' ')[0], rev.sha256);
      const ok = execFileSync('openssl', [
        'pkeyutl',
        '-verify',
        '-pubin',
        '-inkey',
        f('pub.pem'),
        '-rawin',
        '-in',
        f('artifact'),
        '-sigfile',
        f('sig'),
      ]).toString();
      assert.match(ok, /Signature Verified Successfully/);
      const flipped = Buffer.from(rev.content);
      flipped[0] = flipped[0]! ^ 1;
      writeFileSync(f('artifact'), flipped);
      assert.throws(() =>
        execFileSync(
          'openssl',
          ['pkeyutl', '-verify', '-pubin', '-inkey', f('pub.pem'), '-rawin', '-in', f('artifact'), '-sigfile', f('sig')],
          { stdio: 'pipe' },
        ),
      );
    });
  });
}
