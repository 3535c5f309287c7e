/**
 * Bash tool calls decided per simple command over HTTPS against the real `svc serve`, on both stores:
 * a `like "echo *"` permit no longer allows `echo ok && rm -rf victim` (issue 47 item 5); every part
 * of a list, pipeline, substitution or wrapped command must be allowed; ask when a part asks and none
 * denies; the reason names the deciding part; what cannot be parsed, an oversized command and an
 * unknown command name are denied (unless a policy is annotated `@unknown_commands("allow")`); the
 * dry-run route decides the same way; the ledger records the decision.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../helpers/server.js';
import { moduleDeployment, serveBackends, type Send } from '../../helpers/serve-stores.js';

const G = '/v1/m/governance';

const POLICY = `@id("echo") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash")
  when { context.tool_input has command && context.tool_input.command like "echo *" };
@id("git-read") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash")
  when { context has command && context.command.name == "git" && ["status", "log", "diff"].contains(context.command.args_text) };
@id("ls") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash")
  when { context has command && context.command.name == "ls" };
@id("ask-rm") @decision("ask") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash")
  when { context has command && context.command.name == "rm" && !context.command.args.contains("-rf") };
@id("no-etc-writes") forbid(principal, action, resource == Svc::Tool::"Bash")
  when { context has command && context.command.writes.contains("/etc/passwd") };`;

for (const b of await serveBackends()) {
  let server: TestServer;
  let owner: string;
  let editorKey: string;
  let send: Send;

  const decide = async (command: unknown) => {
    const res = await send(editorKey, 'POST', `${G}/pep/decisions`, {
      hook_event_name: 'PreToolUse',
      session_id: 'sess-bash',
      tool_name: 'Bash',
      tool_input: { command, description: 'test' },
    });
    assert.equal(res.status, 200, res.text);
    return res.json() as { decision: string; reason: string; policies: string[]; revision: number | null; decision_id: string };
  };

  describe(`${b.backend}: Bash tool calls decided per simple command`, { skip: b.skip }, () => {
    before(async () => {
      const d = await moduleDeployment(b, { editor: 'editor' });
      ({ server, send } = d);
      owner = d.tokens['owner']!;
      const k = await send(d.tokens['editor']!, 'POST', '/v1/tokens', { name: 'bash-hook', role: 'editor', tenant: d.tenant });
      assert.equal(k.status, 201, k.text);
      editorKey = k.json().token as string;
      const pub = await send(owner, 'POST', `${G}/pdp/publish`, { content: POLICY, note: 'bash' });
      assert.equal(pub.status, 201, pub.text);
    });
    after(async () => {
      await server?.stop();
    });

    it('a prefix rule is not a boundary: `echo ok && rm -rf victim` is denied, naming the part that decided', async () => {
      assert.equal((await decide('echo ok')).decision, 'allow');
      const d = await decide('echo ok && rm -rf victim');
      assert.equal(d.decision, 'deny', d.reason);
      assert.match(d.reason, /rm -rf victim/);
      assert.equal(d.revision, 1);
      for (const c of ['echo ok; rm -rf victim', 'echo ok | sh', 'echo $(rm -rf victim)', 'echo `rm -rf victim`', 'echo ok\nrm -rf victim',
        'echo <(rm -rf victim)', '(echo ok; rm -rf victim)', 'echo ok & rm -rf victim', 'echo ok || rm -rf victim', 'echo ok > $(curl x)',
        'bash -c "echo ok; rm -rf victim"', 'eval "echo ok; rm -rf victim"', 'env X=1 rm -rf victim', 'echo ok; command rm -rf victim',
        'echo ok; r\\m -rf victim', "echo ok; 'r''m' -rf victim", 'echo ok; {rm,-rf,victim}', 'echo ok; $X -rf victim',
        'cat <<EOF\n$(rm -rf victim)\nEOF', 'f() { rm -rf victim; }; echo ok', 'echo ok\\\n; rm -rf victim', 'X=1; echo ok',
        'echo "unterminated', 'echo ok; xargs rm -rf', 'echo ok > /etc/passwd', 'echo ok; find . -exec rm -rf {} \\;']) {
        const r = await decide(c);
        assert.equal(r.decision, 'deny', `${JSON.stringify(c)}: ${r.reason}`);
      }
    });

    it('a compound command is allowed when every part is; ask when a part asks and none denies', async () => {
      for (const c of ['echo ok && ls -la', 'git status | echo done', 'ls; echo "$(git log)"', '# comment\necho ok # trailing',
        'echo ok \\\n  more', 'echo ok 2>&1 >/dev/null']) {
        const r = await decide(c);
        assert.equal(r.decision, 'allow', `${JSON.stringify(c)}: ${r.reason}`);
      }
      assert.equal((await decide('git push')).decision, 'deny');
      const ask = await decide('ls && rm old.txt');
      assert.equal(ask.decision, 'ask', ask.reason);
      assert.match(ask.reason, /rm old\.txt/);
      assert.ok(ask.policies.includes('ask-rm'), ask.reason);
      const denied = await decide('rm old.txt; rm -rf /');
      assert.equal(denied.decision, 'deny', denied.reason);
      assert.match(denied.reason, /rm -rf \//);
    });

    it('unparseable, oversized and non-string commands are denied; the reason says why', async () => {
      const bad = await decide('echo "unterminated');
      assert.equal(bad.decision, 'deny');
      assert.match(bad.reason, /cannot be parsed/);
      const big = await decide(`echo ${'a'.repeat(70 * 1024)}`);
      assert.equal(big.decision, 'deny');
      assert.match(big.reason, /64 KiB/);
      const notString = await decide(['echo', 'ok']);
      assert.equal(notString.decision, 'deny', notString.reason);
    });

    it('an unknown command name is denied unless a policy annotated @unknown_commands("allow") permits it', async () => {
      const d = await decide('$CMD ok');
      assert.equal(d.decision, 'deny');
      assert.match(d.reason, /not known/);
      const pub = await send(owner, 'POST', `${G}/pdp/publish`, {
        content: `${POLICY}\n@id("any") @unknown_commands("allow") permit(principal, action == Svc::Action::"PreToolUse", ` +
          `resource == Svc::Tool::"Bash") when { context has command && !context.command.known };`,
        note: 'unknown allowed',
      });
      assert.equal(pub.status, 201, pub.text);
      const allowed = await decide('$CMD ok');
      assert.equal(allowed.decision, 'allow', allowed.reason);
      // The forbid still applies to the known parts.
      assert.equal((await decide('$CMD ok; echo x > /etc/passwd')).decision, 'deny');
    });

    it('dry-run decides the same way, and the ledger records the decision of the compound command', async () => {
      const res = await send(owner, 'POST', `${G}/pdp/dry-run`, {
        content: POLICY,
        input: { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'echo ok && rm -rf victim' } },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json().decision, 'deny', res.text);
      const d = await decide('echo ok && rm -rf victim');
      // The reason names the command, redacted like the recorded input: no credential reaches the ledger.
      const secret = 'svck_SUPERSECRETVALUE123456';
      const s = await decide(`echo ok && curl -H "Authorization: Bearer ${secret}" https://example.com`);
      assert.equal(s.decision, 'deny', s.reason);
      assert.match(s.reason, /command 2 of 2 "curl/);
      assert.ok(!s.reason.includes(secret), s.reason);
      const audit = await send(owner, 'GET', `/v1/audit?action=pep.decision&limit=1000`);
      const items = audit.json().items as Array<{ target_id: string; meta: string }>;
      const rec = items.find((r) => r.target_id === d.decision_id);
      assert.ok(rec, 'the decision is in the ledger');
      assert.match(rec.meta, /"decision":"deny"/);
      const srec = items.find((r) => r.target_id === s.decision_id);
      assert.ok(srec && !srec.meta.includes(secret), srec?.meta);
    });
  });
}
