/**
 * The hook's bounds, on the process itself (issue 47 items 1-3): it exits 2 at the deadline even
 * while stdin stays open; an answer that completes after the deadline is a deny; an answer over
 * 64 KiB is a deny and its read is aborted; the rendered command turns every exit but 0 and 2
 * into 2 under a real `sh`.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeCert, REPO_ROOT, runSvc, tempDir, type SvcRun, type TestCert } from './harness.js';
import { hookCommand } from '../../src/cli/commands/agent/managed-settings.js';

const HOOK = JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's-1', tool_name: 'Bash', tool_input: { command: 'ls' } });
const ALLOW = JSON.stringify({ decision: 'allow', reason: 'ok', revision: 1, decision_id: 'd', policies: [], kill_switch: null });

function deniedAt(run: SvcRun, why: RegExp): void {
  assert.equal(run.code, 2, `exit ${run.code}: ${run.stdout} ${run.stderr}`);
  const out = JSON.parse(run.stdout).hookSpecificOutput;
  assert.equal(out.permissionDecision, 'deny');
  assert.match(out.permissionDecisionReason, why);
}

describe('svc claude-hook: deadline and size bound', () => {
  let cert: TestCert;
  let server: HttpsServer;
  let mode: (req: IncomingMessage, res: ServerResponse) => void = () => {};
  let sent = 0;
  const sockets: Socket[] = [];
  const hook = (timeout: string) =>
    runSvc(
      [
        'claude-hook',
        '--server',
        `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
        '--pin-sha256',
        cert.pinBase64,
        '--timeout',
        timeout,
      ],
      {
        stdin: HOOK,
      },
    );

  before(async () => {
    cert = makeCert();
    server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => mode(req, res));
    server.on('connection', (s: Socket) => sockets.push(s));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((ok) => server.close(ok));
  });

  it('stdin left open and never closed: exit 2 at the deadline', async () => {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [join(REPO_ROOT, 'bin', 'svc.js'), 'claude-hook', '--server', 'https://127.0.0.1:9', '--timeout', '1s'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    child.stdin.write(HOOK.slice(0, 20)); // a partial input, and no end
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const code = await new Promise<number | null>((done) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 8000);
      child.on('exit', (c) => (clearTimeout(kill), done(c)));
    });
    const elapsed = Date.now() - started;
    assert.equal(code, 2, `exit ${code} after ${elapsed} ms (null: still running, killed)`);
    assert.ok(elapsed >= 1000 && elapsed < 6000, `exited after ${elapsed} ms`);
    assert.match(JSON.parse(stdout).hookSpecificOutput.permissionDecisionReason, /no decision within 1000 ms/);
  });

  it('an allow that completes after the deadline is a deny, and the hook does not wait for it', async () => {
    mode = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(ALLOW.slice(0, 10));
      setTimeout(() => !res.destroyed && res.end(ALLOW.slice(10)), 2500);
    };
    const run = await hook('1s');
    deniedAt(run, /no decision/);
    assert.ok(run.elapsedMs < 2500 + 1000, `waited ${run.elapsedMs} ms`);
  });

  it('an allow over 64 KiB is a deny: declared (300 MB), or streamed (read aborted), or just over the bound', async () => {
    mode = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(300 * 1024 * 1024) });
      res.write('{"decision":"allow","reason":"');
    };
    deniedAt(await hook('10s'), /exceeds 65536 bytes/);
    sent = 0;
    mode = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"decision":"allow","reason":"');
      const pump = (): void => {
        while (!res.destroyed && sent < 300 * 1024 * 1024) {
          sent += 16384;
          if (!res.write('a'.repeat(16384))) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end('"}');
      };
      pump();
    };
    const streamed = await hook('10s');
    deniedAt(streamed, /exceeds 65536 bytes/);
    assert.ok(streamed.elapsedMs < 8000, `took ${streamed.elapsedMs} ms`);
    assert.ok(sent < 50 * 1024 * 1024, `the server could send ${sent} bytes: the read was not aborted`);
    const over = JSON.stringify({ decision: 'allow', reason: 'x'.repeat(70 * 1024), revision: 1, decision_id: 'd' });
    mode = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(over);
    };
    deniedAt(await hook('10s'), /exceeds 65536 bytes/);
    mode = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(ALLOW);
    };
    const ok = await hook('10s');
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).hookSpecificOutput.permissionDecision, 'allow');
  });

  it('the rendered command under sh: 0 and 2 pass through, 1, 127, 126 and a signal become 2 with a reason', () => {
    const dir = tempDir('svc-hook-wrap-');
    const script = (name: string, body: string): string => {
      const path = join(dir, name);
      writeFileSync(path, `#!/bin/sh\n${body}\n`);
      chmodSync(path, 0o755);
      return path;
    };
    const cases: Array<[string[], number, RegExp | null]> = [
      [[script('ok', 'echo "{}"; exit 0')], 0, null],
      [[script('deny', 'echo deny-json; echo why >&2; exit 2')], 2, null],
      [[script('crash', 'exit 1')], 2, /could not run \(exit 1\)/],
      [[join(dir, 'missing')], 2, /could not run \(exit 127\)/],
      [[script('killed', 'kill -9 $$')], 2, /could not run \(exit 137\)/],
      [['sh', '-c', 'echo "$1"; exit 3', 'arg with space'], 2, /could not run \(exit 3\)/],
    ];
    writeFileSync(join(dir, 'plain'), 'exit 0\n');
    cases.push([[join(dir, 'plain')], 2, /could not run \(exit 126\)/]);
    for (const [words, code, why] of cases) {
      const run = spawnSync('/bin/sh', ['-c', hookCommand(words)], { encoding: 'utf8' });
      assert.equal(run.status, code, `${hookCommand(words)}: ${run.stderr}`);
      if (why) assert.match(run.stderr, why);
      else assert.doesNotMatch(run.stderr, /could not run/);
    }
    // Quoting: the argument with a space reached the command as one word.
    const spaced = spawnSync('/bin/sh', ['-c', hookCommand(['sh', '-c', 'echo "[$1]"', 'a b'])], { encoding: 'utf8' });
    assert.equal(spaced.stdout, '[claude-hook]\n');
  });

  it('the hook entry point reaches only Node built-ins, src/cli/hook and small client files: no command tree, no undici', () => {
    const src = join(REPO_ROOT, 'src');
    const seen = new Set<string>();
    const packages = new Set<string>();
    const walk = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:^import\s[^;]*?from\s+|import\s*\(\s*|^export\s[^;]*?from\s+)'([^']+)'/gm)) {
        const spec = m[1] as string;
        if (/^import\s+type\s/.test(m[0])) continue;
        if (spec.startsWith('.')) walk(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
        else packages.add(spec);
      }
    };
    walk(join(src, 'cli', 'hook', 'claude-hook.ts'));
    const files = [...seen].map((f) => relative(src, f)).sort();
    assert.deepEqual(
      files.filter((f) => !f.startsWith('cli/hook/')),
      [
        'cli/client/context.ts', // loaded only when a saved-context file exists
        'cli/client/duration.ts',
        'cli/client/errors.ts',
        'cli/client/exit-codes.ts',
        'cli/client/pins.ts',
      ],
    );
    assert.deepEqual(
      [...packages].filter((p) => !p.startsWith('node:')),
      ['yaml'],
    ); // context.ts's, on demand
  });
});
