/**
 * `svc claude-hook` fails closed: against a stopped server, a server that accepts and never answers
 * (deny after the timeout, measured), a wrong pin, a 500, a malformed body and an unknown decision
 * it prints a PreToolUse deny the agent understands and exits 2; against the real server it prints
 * the server's decision (exit 0), and a kill switch turns that into a deny.
 */
import assert from 'node:assert/strict';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { makeCert, runSvc, startFakeServer, type FakeServer, type TestCert } from './harness.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

const HOOK = JSON.stringify({
  hook_event_name: 'PreToolUse',
  session_id: 's-1',
  tool_name: 'Bash',
  tool_input: { command: 'git status' },
  transcript_path: '/tmp/t.jsonl',
  cwd: '/work',
  future_field: 1,
});
const PATH = '/v1/m/governance/pep/decisions';

function denied(run: { code: number | null; stdout: string; stderr: string }, why: RegExp): void {
  assert.equal(run.code, 2, `exit code: ${run.stdout} ${run.stderr}`);
  const out = JSON.parse(run.stdout) as {
    hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string };
  };
  assert.equal(out.hookSpecificOutput.hookEventName, 'PreToolUse');
  assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
  assert.match(out.hookSpecificOutput.permissionDecisionReason, why);
  assert.match(run.stderr, why);
}

describe('svc claude-hook against broken control planes: always deny', () => {
  let cert: TestCert;
  let fake: FakeServer;
  let silentTcp: TcpServer;
  let silentHttps: HttpsServer;
  const sockets: Socket[] = [];
  const hook = (server: string, extra: string[] = [], env: Record<string, string> = {}) =>
    runSvc(['claude-hook', '--server', server, '--ca-cert', cert.certPath, '--token', 'svck_test', ...extra], { stdin: HOOK, env });

  before(async () => {
    cert = makeCert();
    fake = await startFakeServer(cert);
    silentTcp = createTcpServer((s) => sockets.push(s));
    await new Promise<void>((ok) => silentTcp.listen(0, '127.0.0.1', ok));
    silentHttps = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, () => {});
    silentHttps.on('connection', (s: Socket) => sockets.push(s));
    await new Promise<void>((ok) => silentHttps.listen(0, '127.0.0.1', ok));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await fake.close();
    await new Promise((ok) => silentTcp.close(ok));
    await new Promise((ok) => silentHttps.close(ok));
  });

  it('nothing listening: deny', async () => {
    const port = (silentTcp.address() as AddressInfo).port;
    const closed = createTcpServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const free = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    assert.notEqual(free, port);
    denied(await hook(`https://127.0.0.1:${free}`), /unreachable|ECONNREFUSED/);
  });

  it('accepts the connection and never answers: deny after the timeout, not before and not much after', async () => {
    for (const port of [(silentTcp.address() as AddressInfo).port, (silentHttps.address() as AddressInfo).port]) {
      const run = await hook(`https://127.0.0.1:${port}`, ['--timeout', '1s']);
      denied(run, /timeout|no answer|no decision/);
      // elapsed includes starting node (~0.3-1 s on a busy machine)
      assert.ok(run.elapsedMs >= 1000, `denied after ${run.elapsedMs} ms`);
      assert.ok(run.elapsedMs < 6000, `denied after ${run.elapsedMs} ms`);
    }
  });

  it('the default timeout is 5 s', async () => {
    const run = await hook(`https://127.0.0.1:${(silentHttps.address() as AddressInfo).port}`);
    denied(run, /timeout|no answer|no decision/);
    assert.ok(run.elapsedMs >= 5000 && run.elapsedMs < 10_000, `denied after ${run.elapsedMs} ms`);
  });

  it('a wrong pin (TLS failure): deny, and nothing is sent', async () => {
    fake.routes.set(`POST ${PATH}`, {
      status: 200,
      body: { decision: 'allow', reason: 'x', revision: 1, decision_id: 'd', policies: [], kill_switch: null },
    });
    const before = fake.seen.length;
    const run = await runSvc(['claude-hook', '--server', fake.url, '--pin-sha256', 'A'.repeat(43) + '=', '--token', 'svck_test'], {
      stdin: HOOK,
    });
    denied(run, /tls|pin|certificate/i);
    assert.equal(fake.seen.length, before);
  });

  it('a 500, a malformed body, an unknown decision, a missing field: deny', async () => {
    const answers: Array<[unknown, number, RegExp]> = [
      [{ error: { code: 'internal', message: 'internal error' } }, 500, /internal|500/],
      ['<html>not json</html>', 200, /malformed/],
      [{ decision: 'maybe', reason: 'x' }, 200, /unknown decision/],
      [{ reason: 'no decision field' }, 200, /malformed/],
    ];
    for (const [body, status, why] of answers) {
      fake.routes.set(`POST ${PATH}`, { status, body, contentType: typeof body === 'string' ? 'text/html' : 'application/json' });
      denied(await hook(fake.url), why);
    }
  });

  it('an allow from the server is printed as the agent expects, and only the hook fields are sent', async () => {
    fake.routes.set(`POST ${PATH}`, {
      status: 200,
      body: {
        decision: 'allow',
        reason: 'permitted by policy git-only',
        revision: 3,
        decision_id: 'd-1',
        policies: ['git-only'],
        kill_switch: null,
      },
    });
    const run = await hook(fake.url);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.equal(out.hookSpecificOutput.permissionDecision, 'allow');
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /git-only.*revision 3/);
  });

  it('malformed hook input on stdin: deny', async () => {
    const run = await runSvc(['claude-hook', '--server', fake.url, '--ca-cert', cert.certPath, '--token', 'svck_test'], {
      stdin: '{"tool_name":',
    });
    denied(run, /not JSON/);
  });
});

describe('svc claude-hook against the real server', () => {
  let server: TestServer;
  let owner: string;
  let key: string;
  let tenant: string;
  const send = (method: string, p: string, body: unknown) =>
    call(server, method, p, {
      headers: { authorization: `Bearer ${owner}`, 'x-service-tenant': tenant, 'content-type': 'application/json' },
      body: JSON.stringify(body),
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
    key = (await send('POST', '/v1/tokens', { name: 'hook', role: 'editor', tenant })).json().token;
    assert.equal(
      (
        await send('POST', '/v1/m/governance/pdp/publish', {
          content: 'permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash");',
        })
      ).status,
      201,
    );
  });
  let stopped = false;
  after(async () => {
    if (!stopped) await server?.stop();
  });

  const hook = (extra: string[] = []) =>
    runSvc(['claude-hook', '--server', server.url, '--pin-sha256', server.pinSha256 as string, ...extra], {
      stdin: HOOK,
      env: { SERVICE_TOKEN: key },
    });

  it('PostToolUse under a PreToolUse-only policy: recorded as a call that ran, nothing told to the model; a forbid flags it', async () => {
    const post = JSON.stringify({
      ...JSON.parse(HOOK),
      hook_event_name: 'PostToolUse',
      session_id: 's-post',
      tool_response: { stdout: '' },
    });
    const run = await runSvc(['claude-hook', '--server', server.url, '--pin-sha256', server.pinSha256 as string], {
      stdin: post,
      env: { SERVICE_TOKEN: key },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {});
    const listed = async () =>
      (
        await call(server, 'GET', '/v1/m/governance/pep/decisions?session_id=s-post', {
          headers: { authorization: `Bearer ${owner}`, 'x-service-tenant': tenant },
        })
      ).json().items as Array<{ decision: string; reason: string; hook_event_name: string }>;
    const first = await listed();
    assert.equal(first.length, 1);
    assert.equal(first[0]?.hook_event_name, 'PostToolUse');
    assert.equal(first[0]?.decision, 'allow');
    assert.match(first[0]?.reason ?? '', /the call ran/);
    const policy =
      'permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash");\n' +
      '@id("flag-git") forbid(principal, action == Svc::Action::"PostToolUse", resource == Svc::Tool::"Bash")' +
      ' when { context.tool_input has command && context.tool_input.command like "git *" };';
    assert.equal((await send('POST', '/v1/m/governance/pdp/publish', { content: policy })).status, 201);
    const flagged = await runSvc(['claude-hook', '--server', server.url, '--pin-sha256', server.pinSha256 as string], {
      stdin: post,
      env: { SERVICE_TOKEN: key },
    });
    assert.equal(flagged.code, 0, flagged.stderr);
    const out = JSON.parse(flagged.stdout);
    assert.equal(out.decision, 'block');
    assert.match(out.reason, /flags this call, which already ran: command "git status": forbidden by policy flag-git/);
    assert.doesNotMatch(out.reason, new RegExp(`${server.port}|${(server.pinSha256 as string).slice(0, 12).replace(/[+/]/g, '.')}`));
    assert.equal((await listed())[1]?.decision, 'deny');
  });

  it('the server decides (exit 0); a kill switch makes it deny; a wrong pin to the real server denies', async () => {
    const ok = await hook();
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).hookSpecificOutput.permissionDecision, 'allow');
    assert.equal((await send('POST', '/v1/m/governance/pep/kill-switches', { reason: 'incident' })).status, 201);
    const killed = await hook();
    assert.equal(killed.code, 0, killed.stderr);
    const out = JSON.parse(killed.stdout).hookSpecificOutput;
    assert.equal(out.permissionDecision, 'deny');
    assert.match(out.permissionDecisionReason, /kill switch tenant is engaged: incident/);
    const wrongPin = await runSvc(['claude-hook', '--server', server.url, '--pin-sha256', 'B'.repeat(43) + '='], {
      stdin: HOOK,
      env: { SERVICE_TOKEN: key },
    });
    denied(wrongPin, /tls|pin|certificate/i);
  });

  it('a stopped server: deny', async () => {
    const url = server.url;
    const pin = server.pinSha256 as string;
    stopped = true;
    await server.stop();
    denied(
      await runSvc(['claude-hook', '--server', url, '--pin-sha256', pin], { stdin: HOOK, env: { SERVICE_TOKEN: key } }),
      /unreachable|ECONNREFUSED/,
    );
  });
});
