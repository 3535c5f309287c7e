/**
 * Issue 30 item 13: help as a newcomer meets it. A group prints its commands (`svc agent --help`,
 * exit 0), a mistyped command gets "did you mean", no `#0` placeholders anywhere in help, the
 * shared client flags printed once under "Client flags", and `svc completion bash|zsh|fish`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runSvc, tempDir } from './harness.js';

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

describe('svc help', () => {
  it('a group prints its commands with exit 0: svc agent --help, svc accessmap --help, svc accessmap attack-paths --help', async () => {
    const agent = await runSvc(['agent', '--help']);
    assert.equal(agent.code, 0, agent.stderr);
    for (const c of ['create', 'get', 'ls', 'rm', 'update']) assert.match(agent.stdout, new RegExp(`svc agent ${c}\\b`));
    assert.ok(!agent.stdout.includes('svc status'), 'only the group');
    const accessmap = await runSvc(['accessmap', '--help']);
    assert.equal(accessmap.code, 0, accessmap.stderr);
    for (const c of ['graph', 'drift', 'neighbors', 'attack-paths reachability'])
      assert.ok(accessmap.stdout.includes(`svc accessmap ${c}`), c);
    const paths = await runSvc(['accessmap', 'attack-paths', '-h']);
    assert.equal(paths.code, 0);
    assert.ok(paths.stdout.includes('svc accessmap attack-paths summary'));
    const bare = await runSvc(['agent']);
    assert.equal(bare.code, 2, 'a bare group is a usage error, its commands on stderr');
    assert.ok(bare.stderr.includes('svc agent ls'));
  });

  it('a mistyped command suggests the nearest one (exit 2)', async () => {
    for (const [typed, meant] of [
      [['agnet', 'ls'], 'svc agent ls'],
      [['stauts'], 'svc status'],
      [['accessmap', 'neighbours', '--id', 'x'], 'svc accessmap neighbors'],
    ] as const) {
      const run = await runSvc([...typed]);
      assert.equal(run.code, 2);
      assert.ok(run.stderr.includes(`did you mean "${meant}"?`), run.stderr);
      assert.equal(run.stderr.split('\n').filter(Boolean).length, 1);
    }
    const inside = await runSvc(['agent', 'frobnicate']);
    assert.equal(inside.code, 2);
    assert.ok(inside.stderr.includes('svc agent --help'), inside.stderr);
  });

  it('shows no #0 placeholders, and the client flags once under "Client flags"', async () => {
    const top = await runSvc(['--help']);
    assert.equal(top.code, 0);
    const command = await runSvc(['agent', 'ls', '--help']);
    const definitions = await runSvc(['--clipanion=definitions']);
    for (const run of [top, command, definitions]) assert.ok(!/#\d/.test(run.stdout), run.stdout.slice(0, 2000));
    assert.match(top.stdout, /^Client flags/m);
    // Flags only the client commands take appear once; --server and a few others may also be a
    // non-client command's own flag (svc collector, svc agent managed-settings), so they are bounded.
    for (const flag of ['--tenant <', '--context <', '--allow-cleartext'])
      assert.equal(top.stdout.split(flag).length - 1, 1, `${flag} printed once in svc --help`);
    for (const flag of ['--server <', '--pin-sha256 <', '--timeout <'])
      assert.ok(top.stdout.split(flag).length - 1 <= 3, `${flag} not repeated per command`);
    assert.match(command.stdout, /--server <server>/, 'a command\'s own help still lists every flag it takes');
    assert.match(top.stdout, /svc agent create <--name <name>>/);
  });

  it('svc completion bash completes commands, subcommands and flags', async () => {
    const run = await runSvc(['completion', 'bash']);
    assert.equal(run.code, 0, run.stderr);
    const file = join(tempDir('svc-completion-'), 'svc.bash');
    writeFileSync(file, run.stdout);
    const complete = (...words: string[]) => {
      const script =
        `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' ` +
        `"\${COMPREPLY[@]}"`;
      const out = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      assert.equal(out.status, 0, out.stderr);
      return out.stdout.split('\n').filter(Boolean);
    };
    assert.deepEqual(complete('svc', 'ag'), ['agent']);
    assert.deepEqual(complete('svc', 'agent', 'u'), ['update']);
    assert.deepEqual(complete('svc', 'accessmap', 'attack-paths', 'r'), ['reachability']);
    assert.ok(complete('svc', 'agent', 'create', '--na').includes('--name'));
    assert.ok(complete('svc', 'config', '').includes('use-context'));
    assert.equal((await runSvc(['completion', 'tcsh'])).code, 2, 'an unknown shell is a usage error');
  });

  it('svc completion zsh and fish print scripts their shells accept', async (t) => {
    const zsh = await runSvc(['completion', 'zsh']);
    assert.equal(zsh.code, 0);
    assert.match(zsh.stdout, /^#compdef svc/);
    const fish = await runSvc(['completion', 'fish']);
    assert.equal(fish.code, 0);
    assert.match(fish.stdout, /complete -c svc -n 'test \(__svc_path\) = '\\''agent'\\''' -a 'create get ls [^']*update'/);
    const dir = tempDir('svc-completion-');
    if (has('zsh')) {
      writeFileSync(join(dir, '_svc'), zsh.stdout);
      assert.equal(spawnSync('zsh', ['-n', join(dir, '_svc')]).status, 0);
    } else t.diagnostic('zsh not installed: syntax not checked');
    if (has('fish')) {
      writeFileSync(join(dir, 'svc.fish'), fish.stdout);
      assert.equal(spawnSync('fish', ['-n', join(dir, 'svc.fish')]).status, 0);
    } else t.diagnostic('fish not installed: syntax not checked');
  });
});
