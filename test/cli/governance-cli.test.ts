/**
 * The governance commands end to end against the real server: kill-switches engage/ls/release,
 * approvals ls/get/approve/reject/
 * cancel (the requester's approve refused with exit 3), hookpep validate (exit 7 on errors),
 * publish (-y), versions, explain, rollback; agent managed-settings (defaults: timeout 5, redact,
 * stdout).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jsonOut, runSvc, tempDir } from './harness.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

describe('svc governance / hookpep / agent managed-settings', () => {
  let server: TestServer;
  let owner: string;
  let tenant: string;
  let editor: string;
  const dir = tempDir('svc-gov-cli-');
  const send = (token: string, method: string, p: string, body: unknown) =>
    call(server, method, p, {
      headers: { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const svc = (token: string, args: string[]) =>
    runSvc([...args, '--server', server.url, '--pin-sha256', server.pinSha256 as string, '--tenant', tenant], {
      env: { SERVICE_TOKEN: token },
    });

  before(async () => {
    server = await startServer({ env: { SERVICE_RATE_LIMIT_RPS: '0' } });
    const token = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout())?.[1] as string;
    const json = { 'content-type': 'application/json' };
    const setup = await call(server, 'POST', '/v1/setup', {
      body: JSON.stringify({ token, email: 'o@example.test', password: 'owner password 123', organization: 'Acme' }),
      headers: json,
    });
    tenant = setup.json().organization.id;
    owner = (
      await call(server, 'POST', '/v1/auth/login', {
        body: JSON.stringify({ email: 'o@example.test', password: 'owner password 123' }),
        headers: json,
      })
    ).json().token;
    assert.equal(
      (await send(owner, 'POST', '/v1/users', { email: 'e@example.test', password: 'a long enough password', role: 'editor' })).status,
      201,
    );
    editor = (
      await call(server, 'POST', '/v1/auth/login', {
        body: JSON.stringify({ email: 'e@example.test', password: 'a long enough password' }),
        headers: json,
      })
    ).json().token;
  });
  after(async () => server?.stop());

  it('approvals: ls, get, approve (requester refused), reject, cancel -y', async () => {
    const a = (await send(owner, 'POST', '/v1/m/governance/approvals', { action: 'x.run', subject: 's/1', quorum: 1 })).json();
    const ls = jsonOut(await svc(owner, ['governance', 'approvals', 'ls', '--status', 'pending', '-o', 'json']));
    assert.ok(ls.items.some((i: { id: string }) => i.id === a.id));
    const mine = await svc(owner, ['governance', 'approvals', 'approve', a.id, '--reason', 'mine']);
    assert.equal(mine.code, 3, mine.stderr);
    const ok = await svc(editor, ['governance', 'approvals', 'approve', a.id, '--reason', 'checked', '-o', 'json']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(jsonOut(ok).status, 'approved');
    assert.equal(jsonOut(await svc(owner, ['governance', 'approvals', 'get', a.id, '-o', 'json'])).approvals, 1);
    const b = (await send(owner, 'POST', '/v1/m/governance/approvals', { action: 'x.run', subject: 's/2' })).json();
    assert.equal(
      jsonOut(await svc(editor, ['governance', 'approvals', 'reject', b.id, '--reason', 'no', '-o', 'json'])).status,
      'rejected',
    );
    const c = (await send(owner, 'POST', '/v1/m/governance/approvals', { action: 'x.run', subject: 's/3' })).json();
    assert.equal((await svc(owner, ['governance', 'approvals', 'cancel', c.id])).code, 2, 'cancel without -y in a non-interactive session');
    assert.equal(jsonOut(await svc(owner, ['governance', 'approvals', 'cancel', c.id, '-y', '-o', 'json'])).status, 'cancelled');
  });

  it('kill-switches: engage (-y) denies that agent at once, ls shows it, release (-y) lifts it; a second release exits 4', async () => {
    const decide = async (agent: string) =>
      (
        await send(owner, 'POST', '/v1/m/governance/pep/decisions', {
          hook_event_name: 'PreToolUse',
          tool_name: 'Read',
          tool_input: { file_path: 'x' },
          session_id: 's-1',
          agent_id: agent,
        })
      ).json();
    const made = await send(owner, 'POST', '/v1/agents', { name: 'agent-7', external_id: 'ext-7' });
    assert.equal(made.status, 201, made.text);
    const id7 = made.json().id as string;
    assert.equal(
      (await svc(owner, ['governance', 'kill-switches', 'engage', '--agent', 'agent-7'])).code,
      2,
      'engage needs -y ' + 'when not interactive',
    );
    const eng = await svc(owner, [
      'governance',
      'kill-switches',
      'engage',
      '--agent',
      'agent-7',
      '--reason',
      'incident 12',
      '-y',
      '-o',
      'json',
    ]);
    assert.equal(eng.code, 0, eng.stderr);
    assert.deepEqual([jsonOut(eng).scope, jsonOut(eng).reason], [`agent:${id7}`, 'incident 12'], 'stored by id');
    assert.deepEqual([(await decide('agent-7')).kill_switch, (await decide('agent-8')).kill_switch], [`agent:${id7}`, null]);
    // Whatever form the hook sends: name, id, external id.
    for (const ref of ['agent-7', id7, id7.toUpperCase(), 'ext-7']) assert.equal((await decide(ref)).kill_switch, `agent:${id7}`, ref);
    assert.equal((await svc(editor, ['governance', 'kill-switches', 'engage', '-y'])).code, 3, 'only admins engage');
    const ls = await svc(owner, ['governance', 'kill-switches', 'ls']);
    assert.match(ls.stdout, new RegExp(`agent:${id7}\\s+incident 12`));
    assert.equal((await svc(owner, ['governance', 'kill-switches', 'release', '--agent', 'agent-7', '-y'])).code, 0);
    assert.equal((await decide('agent-7')).kill_switch, null);
    assert.equal((await svc(owner, ['governance', 'kill-switches', 'release', '--agent', 'agent-7', '-y'])).code, 4, 'none engaged');
    assert.deepEqual(jsonOut(await svc(owner, ['governance', 'kill-switches', 'ls', '-o', 'json'])).items, []);
  });

  it('kill-switches: a typo exits 4 naming the close name and stores nothing; two agents of one name exit 5 (ambiguous)', async () => {
    assert.equal((await send(owner, 'POST', '/v1/agents', { name: 'release-bot' })).status, 201);
    const typo = await svc(owner, ['governance', 'kill-switches', 'engage', '--agent', 'relase-bot', '-y', '-o', 'json']);
    assert.equal(typo.code, 4, typo.stderr);
    assert.match(typo.stderr, /not_found: no agent with the id, name or external id "relase-bot"; did you mean "release-bot"\?/);
    assert.deepEqual(jsonOut(await svc(owner, ['governance', 'kill-switches', 'ls', '-o', 'json'])).items, [], 'nothing stored');
    assert.equal((await send(owner, 'POST', '/v1/agents', { name: 'release-bot' })).status, 201);
    const twins = await svc(owner, ['governance', 'kill-switches', 'engage', '--agent', 'release-bot', '-y']);
    assert.equal(twins.code, 5, twins.stderr);
    assert.match(twins.stderr, /ambiguous: "release-bot" names 2 agents/);
    assert.deepEqual(jsonOut(await svc(owner, ['governance', 'kill-switches', 'ls', '-o', 'json'])).items, []);
  });

  it('hookpep: validate exits 7 on errors; publish -y, versions, explain, rollback -y', async () => {
    const bad = path.join(dir, 'bad.cedar');
    const good = path.join(dir, 'good.cedar');
    writeFileSync(bad, 'permit(principal, action, resource');
    writeFileSync(good, '@id("bash") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash");');
    assert.equal((await svc(owner, ['hookpep', 'validate', bad])).code, 7);
    assert.equal((await svc(owner, ['hookpep', 'validate', good])).code, 0);
    assert.equal((await svc(owner, ['hookpep', 'publish', good])).code, 2, 'replacing needs -y when not interactive');
    const p1 = await svc(owner, ['hookpep', 'publish', good, '--note', 'first', '-y', '-o', 'json']);
    assert.equal(jsonOut(p1).revision, 1, p1.stderr);
    writeFileSync(good, '@id("none") forbid(principal, action, resource);');
    assert.equal(jsonOut(await svc(owner, ['hookpep', 'publish', good, '-y', '-o', 'json'])).revision, 2);
    const ex = jsonOut(await svc(owner, ['hookpep', 'explain', '--tool', 'Bash', '--command', 'ls', '-o', 'json']));
    assert.deepEqual([ex.decision, ex.policies], ['deny', ['none']]);
    assert.equal(jsonOut(await svc(owner, ['hookpep', 'rollback', '--revision', '1', '-y', '-o', 'json'])).to.revision, 1);
    const versions = jsonOut(await svc(owner, ['hookpep', 'versions', '-o', 'json'])).items as Array<{ revision: number; active: boolean }>;
    assert.deepEqual(versions.map((v) => [v.revision, v.active]), [[2, false], [1, true]]);
    assert.equal(jsonOut(await svc(owner, ['hookpep', 'dry-run', '--tool', 'Bash', '-o', 'json'])).decision, 'allow');
  });

  it('agent managed-settings: hook for PreToolUse and PostToolUse, timeout 5 s, no credential unless --no-redact', async () => {
    const run = await runSvc(['agent', 'managed-settings', '--server', 'https://svc.example:8443', '--token-file', '/etc/svc/hook-token'], {
      env: { SERVICE_TOKEN: 'svck_DONOTLEAK' },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stdout.includes('svck_DONOTLEAK'));
    const s = JSON.parse(run.stdout);
    for (const ev of ['PreToolUse', 'PostToolUse']) {
      const h = s.hooks[ev][0].hooks[0];
      // The configuration is in env, not on the command line Claude Code shows the model; every exit but 0 and 2 becomes 2.
      assert.equal(
        h.command,
        'svc claude-hook || { s=$?; [ "$s" -eq 2 ] || echo "svc claude-hook could not run (exit $s), so the call is denied" >&2; exit 2; }',
      );
      assert.ok(h.timeout > 5, 'the agent waits longer than the hook client, so svc denies first');
    }
    assert.deepEqual(s.env, {
      SERVICE_HOOK_TIMEOUT: '5s',
      SERVICE_HOOK_SERVER: 'https://svc.example:8443',
      SERVICE_HOOK_TOKEN_FILE: '/etc/svc/hook-token',
    });
    const words = await runSvc(
      ['agent', 'managed-settings', '--command', "node /opt/svc's/bin/svc.js", '--pin-sha256', 'p1', '--pin-sha256', 'p2'],
    );
    const w = JSON.parse(words.stdout);
    assert.match(w.hooks.PreToolUse[0].hooks[0].command, /^node '\/opt\/svc'\\''s\/bin\/svc\.js' claude-hook \|\| \{/);
    assert.equal(w.env.SERVICE_HOOK_PIN_SHA256, 'p1,p2');
    const raw = await runSvc(['agent', 'managed-settings', '--no-redact'], { env: { SERVICE_TOKEN: 'svck_EMBED' } });
    assert.equal(JSON.parse(raw.stdout).env.SERVICE_TOKEN, 'svck_EMBED');
  });
});
