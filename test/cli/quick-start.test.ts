/**
 * Issue 30 item 18: the README's bootstrap block runs as printed (it creates the password file it
 * uses), `--setup-token-file -` on a terminal prompts "Paste the setup token:" with echo off, the
 * collector page binds keys with `--bind-tenant`, and `svc collector --core-addr 127.0.0.1:…` prints
 * no DEP0123 warning. Real servers throughout; the terminal is a real pty (util-linux `script`).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startServer } from '../helpers/server.js';
import { REPO_ROOT, tempDir } from './harness.js';

const SVC = join(REPO_ROOT, 'bin', 'svc.js');
const setupToken = (out: string) => /svcst_[A-Z2-7]+/.exec(out)?.[0] as string;

/** The env of a user with this home: no SERVICE_* or XDG_* from the test's own environment. */
function userEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('SERVICE_') && !k.startsWith('XDG_')) env[k] = v;
  return { ...env, HOME: home, NO_COLOR: '1' };
}

describe('quick start', () => {
  it("the README's bootstrap block runs as printed (port aside) and leaves a working saved context", { timeout: 120_000 }, async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const block = /Redeem it once[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(block, 'the bootstrap block');
    const home = tempDir('svc-qs-home-');
    const dataDir = join(home, '.local', 'share', 'svc');
    mkdirSync(dataDir, { recursive: true });
    const server = await startServer({ dataDir });
    try {
      const work = tempDir('svc-qs-cwd-');
      // The one change: this test's server listens on an ephemeral port, not 8443; npx svc is this checkout's bin.
      const script =
        `set -euo pipefail\n${block.replace(/localhost:8443/g, `localhost:${server.port}`).replace(/npx svc /g, `node ${SVC} `)}`;
      const run = spawnSync('bash', ['-c', script], {
        cwd: work,
        env: userEnv(home),
        input: `${setupToken(server.stdout())}\n`,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(run.status, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
      assert.match(run.stdout, /superadmin you@example\.com/);
      assert.match(run.stdout, /svck_[A-Z2-7]+_/, 'the API key is issued with the saved context');
      assert.equal(readdirSync(join(home, '.config', 'svc')).includes('config.yaml'), true);
    } finally {
      await server.stop();
    }
  });

  it('--setup-token-file - on a terminal prompts "Paste the setup token:" with echo off', { timeout: 60_000 }, async (t) => {
    if (spawnSync('sh', ['-c', 'command -v script']).status !== 0) return t.skip('util-linux script is not installed');
    const server = await startServer();
    try {
      const home = tempDir('svc-tty-');
      writeFileSync(join(home, 'pw.txt'), 'a long enough passphrase\n', { mode: 0o600 });
      const token = setupToken(server.stdout());
      const command =
        `node ${SVC} auth bootstrap --server ${server.url} --pin-sha256 ${server.pinSha256} --setup-token-file - --email ` +
        `tty@example.test --password-file ${join(home, 'pw.txt')}`;
      const child = spawn('script', ['-qfec', command, '/dev/null'], { env: userEnv(home), stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d));
      const exited = new Promise<number | null>((done) => child.on('close', done));
      const deadline = Date.now() + 20_000;
      while (!screen.includes('Paste the setup token:') && Date.now() < deadline && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 50));
      assert.ok(screen.includes('Paste the setup token:'), `prompted: ${JSON.stringify(screen)}`);
      child.stdin.write(`${token}\r`);
      const code = await exited;
      assert.equal(code, 0, screen);
      assert.ok(!screen.includes(token), `the token is not echoed: ${JSON.stringify(screen)}`);
      assert.match(screen, /superadmin tty@example\.test/);
    } finally {
      await server.stop();
    }
  });

  it('svc collector --core-addr 127.0.0.1:<port> prints no DEP0123 warning', { timeout: 60_000 }, async () => {
    const server = await startServer();
    try {
      const dir = tempDir('svc-col-');
      writeFileSync(join(dir, 'ca.pem'), server.certPem as string);
      writeFileSync(join(dir, 'token'), 'svck_AAAAAAAAAAAAAAAAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n', {
        mode: 0o600,
      });
      writeFileSync(join(dir, 'in.jsonl'), '');
      writeFileSync(join(dir, 'sources.yaml'), `sources:\n  - { type: jsonl, path: ${join(dir, 'in.jsonl')} }\n`);
      const child = spawn(
        process.execPath,
        [
          SVC,
          'collector',
          '--core-addr',
          `127.0.0.1:${server.grpcPort}`,
          '--ca',
          join(dir, 'ca.pem'),
          '--token-file',
          join(dir, 'token'),
          '--config',
          join(dir, 'sources.yaml'),
          '--spool-dir',
          join(dir, 'spool'),
        ],
        { env: userEnv(dir), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((done) => child.on('close', done));
      // Push one observation so the TLS handshake with the core surely happens.
      writeFileSync(
        join(dir, 'in.jsonl'),
        '{"kind":"edge","origin_kind":"agent","origin_ref":"a","resource_ref":"s3://b","mode":"r","confidence":"high",' +
          '"signal_source":"t","observed_at":"2026-06-02T10:00:00.000000000Z"}\n',
      );
      const deadline = Date.now() + 15_000;
      while (!/ingest stream ended|rejected/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGTERM');
      await exited;
      assert.match(stderr, /collector running/);
      assert.match(stderr, /ingest stream ended|rejected/, 'the collector reached the core over TLS');
      assert.ok(!stderr.includes('DEP0123'), stderr);
      assert.ok(!stderr.includes('DeprecationWarning'), stderr);
    } finally {
      await server.stop();
    }
  });

  it('the docs bind API keys to a tenant with --bind-tenant, never --tenant (a request header)', () => {
    const files = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
    for (const file of files) {
      for (const line of readFileSync(join(REPO_ROOT, file), 'utf8').split('\n')) {
        if (/svc tokens issue/.test(line)) assert.ok(!/svc tokens issue[^`]*\s--tenant\b/.test(line), `${file}: ${line}`);
      }
    }
  });
});
