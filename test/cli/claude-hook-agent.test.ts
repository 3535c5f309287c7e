/**
 * The hook as the real Claude Code runs it (issue 47): settings rendered by `svc agent
 * managed-settings`, passed with `--settings`, the model scripted on loopback
 * (test/helpers/messages-api.ts), each Bash call leaving a file behind when it ran.
 *
 * - the documented example policy: an allowed call runs and its PostToolUse is recorded as a call
 *   that ran (allow), a forbidden one does not run; no server URL, token path or pin reaches the model;
 * - every failure to start or run is a block: a `--command` with arguments, a binary that does not
 *   exist (127), a launcher without its dist (crash), node refusing to start, a silent server, a
 *   huge allow.
 */
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeCert, REPO_ROOT, runSvc, tempDir, type TestCert } from './harness.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { runClaude, startMessagesApi, type AgentRun, type MessagesApi } from '../helpers/messages-api.js';

const SVC = `node ${join(REPO_ROOT, 'bin', 'svc.js')}`;

/** The Cedar example of docs/governance.md ("Writing policies for hooks"), read from the page itself. */
function documentedPolicy(): string {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'governance.md'), 'utf8');
  const block = /### Writing policies for hooks[\s\S]*?```cedar\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(block && block.includes('@id("git")'), 'the documented example policy (it permits git) is in docs/governance.md');
  return block;
}

async function settingsFor(args: string[], env: Record<string, string> = {}): Promise<Record<string, any>> {
  const run = await runSvc(['agent', 'managed-settings', ...args], { env });
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

/** Runs the scripted calls under `settings`; returns the run and the tool results the model saw. */
async function agent(settings: Record<string, unknown>, commands: string[]): Promise<{ run: AgentRun; results: string[] }> {
  const api: MessagesApi = await startMessagesApi(
    commands.map((command) => ({ name: 'Bash', input: { command, description: 'scripted' } })),
  );
  try {
    const run = await runClaude(REPO_ROOT, api, settings);
    assert.equal(run.code, 0, `claude exited ${run.code}: ${run.stderr}\n${run.stdout.slice(-1500)}`);
    return { run, results: api.toolResults().map((r) => JSON.stringify(r.content)) };
  } finally {
    await api.close();
  }
}

describe('svc claude-hook under the real Claude Code', () => {
  let server: TestServer;
  let owner: string;
  let tenant: string;
  let tokenFile: string;
  let cert: TestCert;
  let silent: HttpsServer;
  let huge: HttpsServer;
  let hugeBytes = 0;
  const sockets: Socket[] = [];

  before(async () => {
    // A loaded shared machine can take longer than the default 20 s to start a server.
    server = await startServer({ env: { SERVICE_RATE_LIMIT_RPS: '0' }, timeoutMs: 90_000 });
    const setupToken = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout())?.[1] as string;
    const json = { 'content-type': 'application/json' };
    const setup = await call(server, 'POST', '/v1/setup', {
      body: JSON.stringify({ token: setupToken, email: 'o@example.test', password: 'owner password 123', organization: 'Acme' }),
      headers: json,
    });
    tenant = setup.json().organization.id;
    owner = (
      await call(server, 'POST', '/v1/auth/login', {
        body: JSON.stringify({ email: 'o@example.test', password: 'owner password 123' }),
        headers: json,
      })
    ).json().token;
    const auth = { authorization: `Bearer ${owner}`, 'x-service-tenant': tenant, ...json };
    const key = (
      await call(server, 'POST', '/v1/tokens', { headers: auth, body: JSON.stringify({ name: 'hook', role: 'editor', tenant }) })
    ).json().token;
    tokenFile = join(tempDir('svc-hook-token-'), 'hook-token');
    writeFileSync(tokenFile, `${key}\n`, { mode: 0o600 });
    const published = await call(server, 'POST', '/v1/m/governance/pdp/publish', {
      headers: auth,
      body: JSON.stringify({ content: documentedPolicy() }),
    });
    assert.equal(published.status, 201, JSON.stringify(published.json()));
    cert = makeCert();
    silent = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, () => {});
    huge = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"decision":"allow","reason":"');
      const chunk = 'a'.repeat(64 * 1024);
      const pump = (): void => {
        while (!res.destroyed && hugeBytes < 300 * 1024 * 1024) {
          hugeBytes += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end('","revision":1,"decision_id":"d"}');
      };
      pump();
    });
    for (const s of [silent, huge]) {
      s.on('connection', (c: Socket) => sockets.push(c));
      await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
    }
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    // A before() that failed leaves these unset: closing nothing must not hang the file.
    for (const s of [silent, huge]) if (s) await new Promise((ok) => s.close(ok));
    await server?.stop();
  });

  it('documented policy: the allowed call runs, the forbidden one does not, PostToolUse recorded as ran; no config shown', async () => {
    const settings = await settingsFor([
      '--command',
      SVC,
      '--server',
      server.url,
      '--token-file',
      tokenFile,
      '--pin-sha256',
      server.pinSha256 as string,
      '--agent',
      'agent-7',
    ]);
    const command = settings.hooks.PreToolUse[0].hooks[0].command as string;
    for (const secret of [server.url, String(server.port), tokenFile, server.pinSha256 as string])
      assert.ok(!command.includes(secret), command);
    const { run, results } = await agent(settings, ['git init -q ran-repo', 'touch forbidden-marker']);
    assert.ok(existsSync(join(run.cwd, 'ran-repo', '.git')), `the allowed call ran: ${results.join('\n')}`);
    assert.ok(!existsSync(join(run.cwd, 'forbidden-marker')), 'the call no policy permits did not run');
    assert.match(results[1] ?? '', /no policy permits/);
    // The whole transcript the model and the user saw: no server, port, token path or pin.
    for (const secret of [`127.0.0.1:${server.port}`, tokenFile, server.pinSha256 as string, 'SERVICE_HOOK'])
      assert.ok(!run.stdout.includes(secret), `the transcript shows ${secret}`);
    assert.doesNotMatch(results[0] ?? '', /block|denied|deny/i, 'the model is not told the call that ran was blocked');
    const listed = await call(server, 'GET', `/v1/m/governance/pep/decisions?agent_id=agent-7`, {
      headers: { authorization: `Bearer ${owner}`, 'x-service-tenant': tenant },
    });
    const items = listed.json().items as Array<{ hook_event_name: string; decision: string; tool_input: { command?: string } }>;
    const of = (event: string, cmd: string) =>
      items.filter((i) => i.hook_event_name === event && i.tool_input.command === cmd).map((i) => i.decision);
    assert.deepEqual(of('PreToolUse', 'git init -q ran-repo'), ['allow']);
    assert.deepEqual(of('PostToolUse', 'git init -q ran-repo'), ['allow'], JSON.stringify(items));
    assert.deepEqual(of('PreToolUse', 'touch forbidden-marker'), ['deny']);
    assert.deepEqual(of('PostToolUse', 'touch forbidden-marker'), []);
  });

  it('a hook that cannot start or crashes blocks the call: missing binary, launcher without dist, node refusing to start', async () => {
    const lone = tempDir('svc-lone-launcher-');
    mkdirSync(join(lone, 'bin'));
    copyFileSync(join(REPO_ROOT, 'bin', 'svc.js'), join(lone, 'bin', 'svc.js'));
    chmodSync(join(lone, 'bin', 'svc.js'), 0o755);
    const cases: Array<[string, RegExp]> = [
      [join(lone, 'no-such-svc'), /could not run \(exit 127\)/],
      [`node ${join(lone, 'bin', 'svc.js')}`, /svc claude-hook could not run, so the call is denied/],
      ['node --no-such-node-flag', /could not run \(exit 9\)/],
    ];
    for (const [command, why] of cases) {
      const settings = await settingsFor(['--command', command, '--server', server.url, '--token-file', tokenFile]);
      const { run, results } = await agent(settings, ['touch marker']);
      assert.ok(!existsSync(join(run.cwd, 'marker')), `${command}: the tool ran: ${results.join('\n')}`);
      assert.match(results[0] ?? '', why, command);
    }
  });

  it('a server that never answers, and one sending a huge allow: blocked at the deadline / at the size bound', async () => {
    const silentUrl = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const slow = await settingsFor(['--command', SVC, '--server', silentUrl, '--pin-sha256', cert.pinBase64, '--timeout', '1']);
    const a = await agent(slow, ['touch marker']);
    assert.ok(!existsSync(join(a.run.cwd, 'marker')), a.results.join('\n'));
    assert.match(a.results[0] ?? '', /no decision/);
    const hugeUrl = `https://127.0.0.1:${(huge.address() as AddressInfo).port}`;
    const big = await settingsFor(['--command', SVC, '--server', hugeUrl, '--pin-sha256', cert.pinBase64, '--timeout', '20']);
    const b = await agent(big, ['touch marker']);
    assert.ok(!existsSync(join(b.run.cwd, 'marker')), b.results.join('\n'));
    assert.match(b.results[0] ?? '', /exceeds 65536 bytes/);
    assert.ok(hugeBytes < 50 * 1024 * 1024, `the hook kept reading: ${hugeBytes} bytes sent`);
  });
});
