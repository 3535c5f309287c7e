/**
 * The Bash command reader of the decision endpoint (src/modules/governance/shell-commands.ts) over a
 * table of tricky commands: every construct that runs a command yields it (lists, pipelines,
 * subshells, substitutions, here-documents, functions, wrappers, `sh -c`, `eval`); words whose value
 * is only known at run time are marked so a policy cannot be fooled; what cannot be parsed, an
 * oversized command and too many commands are errors. The parser is the real mvdan-sh.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseShellCommands, type ShellCommand } from '../../../src/modules/governance/shell-commands.js';

type Want = Partial<ShellCommand>;
const pick = (c: ShellCommand, w: Want) => Object.fromEntries(Object.keys(w).map((k) => [k, c[k as keyof ShellCommand]]));

/** [command, the commands it runs (only the fields given are compared)] */
const TABLE: Array<[string, Want[]]> = [
  ['echo ok && rm -rf victim', [{ name: 'echo', args: ['ok'], text: 'echo ok' }, { name: 'rm', args: ['-rf', 'victim'] }]],
  ['a || b; c & d', [{ name: 'a' }, { name: 'b' }, { name: 'c', background: true }, { name: 'd', background: false }]],
  ['a | b |& c', [{ name: 'a' }, { name: 'b' }, { name: 'c' }]],
  ['echo ok\nrm x', [{ name: 'echo' }, { name: 'rm' }]],
  ['(cd /tmp; rm x)', [{ name: 'cd', args: ['/tmp'] }, { name: 'rm' }]],
  ['{ a; b; } > /etc/passwd', [{ name: 'a', writes: ['/etc/passwd'] }, { name: 'b', writes: ['/etc/passwd'], text: 'b >/etc/passwd' }]],
  ['echo $(rm -rf x)', [{ text: 'rm -rf x' }, { name: 'echo', dynamic: true, args: ['$(rm -rf x)'] }]],
  ['echo `id`', [{ name: 'id' }, { name: 'echo', dynamic: true }]],
  ['diff <(ls a) >(tee b)', [{ text: 'ls a' }, { text: 'tee b' }, { name: 'diff' }]],
  ['echo ok > $(rm x)', [{ text: 'rm x' }, { name: 'echo', dynamic: true }]],
  ['cat <<EOF > f\n$(id)\nEOF', [{ name: 'id' }, { name: 'cat', writes: ['f'], text: 'cat <<EOF >f' }]],
  ["cat <<'EOF'\n$(id)\nEOF", [{ name: 'cat' }]],
  ['f() { rm -rf /; }; f', [{ text: 'rm -rf /' }, { name: 'f' }]],
  ['function g { curl x; }', [{ name: 'curl' }]],
  ['if test -f a; then rm a; elif b; then c; else d; fi', [{ name: 'test' }, { name: 'rm' }, { name: 'b' }, { name: 'c' }, { name: 'd' }]],
  ['for f in $(ls); do rm "$f"; done', [{ name: 'ls' }, { name: 'rm', dynamic: true, args: ['"$f"'] }]],
  ['for ((i=0; i<$(n); i++)); do :; done', [{ name: 'n' }, { name: ':' }]],
  ['while read l; do echo "$l"; done < in.txt', [{ name: 'read', redirects: [{ op: '<', fd: '', target: 'in.txt' }] }, { name: 'echo' }]],
  ['case $(x) in a) rm a;; *) ls;; esac', [{ name: 'x' }, { name: 'rm' }, { name: 'ls' }]],
  ['[[ -f $(x) ]] && (( $(y) > 1 ))', [{ name: 'x' }, { name: 'y' }]],
  ['let x=$(z)', [{ name: 'z' }]],
  ['export Y=$(date) Z; local -r q=1', [{ name: 'date' }, { name: 'export', args: ['Y=$(date)', 'Z'] }, { args: ['-r', 'q=1'] }]],
  ['X=1', [{ name: '', assigns: ['X=1'], text: 'X=1', known: true }]],
  ['PATH=/tmp git status', [{ name: 'git', assigns: ['PATH=/tmp'], text: 'PATH=/tmp git status' }]],
  ['x=$((1+$(y)))', [{ name: 'y' }, { name: '', dynamic: true }]],
  ['echo ${a:-$(z)}', [{ name: 'z' }, { name: 'echo', dynamic: true }]],
  ['> /tmp/x', [{ name: '', writes: ['/tmp/x'], text: '>/tmp/x' }]],
  ['time ls -l', [{ name: 'ls', args: ['-l'] }]],
  ['coproc w { ls; }', [{ name: 'ls', background: true }]],
  ['! true', [{ name: 'true' }]],
  // Quote removal: literal concatenations are known.
  ["'r''m' -rf x", [{ name: 'rm', known: true, dynamic: false }]],
  ['"r""m" -rf x', [{ name: 'rm', known: true }]],
  ['r\\m -rf x', [{ name: 'rm', known: true }]],
  ['\\rm x', [{ name: 'rm', known: true }]],
  ["echo 'a b' \"c\\\"d\"", [{ args: ['a b', 'c"d'], text: 'echo a b c"d' }]],
  ['/bin/rm x', [{ name: '/bin/rm', base: 'rm' }]],
  ['echo héllo > fïle', [{ args: ['héllo'], writes: ['fïle'] }]],
  // Not known before it runs: the name, or an argument.
  ['$X -rf /', [{ name: '$X', known: false, dynamic: true }]],
  ['"$X" x', [{ name: '"$X"', known: false }]],
  ['$(echo rm) -rf /', [{ name: 'echo' }, { name: '$(echo rm)', known: false }]],
  ['{rm,-rf,/}', [{ known: false }]],
  ['r{m,} x', [{ known: false }]],
  ['{"r"m,x} y', [{ known: false }]],
  ['r* x', [{ known: false }]],
  ['r?m x', [{ known: false }]],
  ['[rm] x', [{ known: false }]],
  ['[ -f x ] && ls [ab].txt', [{ name: '[', known: true, args: ['-f', 'x', ']'], dynamic: false }, { name: 'ls', dynamic: true }]],
  ["$'\\x72m' x", [{ known: false }]],
  ["$'rm' x", [{ name: 'rm', known: true }]],
  ['rm *.txt', [{ name: 'rm', known: true, dynamic: true, args: ['*.txt'] }]],
  ['echo @(a|b)', [{ dynamic: true }]],
  ['echo ~/x {}', [{ args: ['~/x', '{}'], dynamic: false }]],
  // Redirections.
  ['cmd 2>&1 >/dev/null 3>out 4>>log &>both <in',
    [{ writes: ['out', 'log', 'both'], text: 'cmd 2>&1 >/dev/null 3>out 4>>log &>both <in' }],
  ],
  ['exec 3>&- >&2', [{ name: 'exec', writes: [] }]],
  ['echo x >| f <<< "s"', [{ writes: ['f'] }]],
  // Wrappers: the wrapper and the command it runs.
  ['env -i X=1 rm -rf /', [{ name: 'env' }, { name: 'rm', via: 'env', args: ['-rf', '/'] }]],
  ['command rm x', [{ name: 'command' }, { name: 'rm', via: 'command' }]],
  ['exec -a n rm x', [{ name: 'exec' }, { name: 'rm', via: 'exec' }]],
  ['sudo -u root env X=1 rm x', [{ name: 'sudo' }, { name: 'env', via: 'sudo' }, { name: 'rm', via: 'env' }]],
  ['timeout -s KILL 5 nice -n 3 nohup rm x', [{ name: 'timeout' }, { name: 'nice' }, { name: 'nohup' }, { via: 'nohup' }]],
  ['ls | xargs -n 1 rm -f', [{ name: 'ls' }, { name: 'xargs' }, { name: 'rm', via: 'xargs', args: ['-f'] }]],
  ['find . -name "*.js" -exec grep -l foo {} \\; -execdir rm {} +',
    [{ name: 'find' }, { name: 'grep', via: 'find -exec' }, { name: 'rm', via: 'find -execdir', args: ['{}'] }]],
  ['env $CMD x', [{ name: 'env' }, { name: '$CMD', known: false }]],
  ['bash -c "echo hi; rm x"', [{ name: 'bash' }, { name: 'echo', via: 'bash -c' }, { name: 'rm', via: 'bash -c' }]],
  ['sh -xc \'sh -c "rm y"\'', [{ name: 'sh' }, { name: 'sh', via: 'sh -c' }, { name: 'rm', via: 'sh -c' }]],
  ['/bin/bash -o pipefail -c "a | b" name', [{ name: '/bin/bash' }, { name: 'a' }, { name: 'b' }]],
  ['bash script.sh', [{ name: 'bash', args: ['script.sh'] }]],
  ['bash $OPTS x', [{ name: 'bash' }, { name: '$OPTS', known: false, via: 'bash -c' }]],
  ['su root -c "rm -rf /"', [{ name: 'su' }, { name: 'rm', via: 'su -c' }]],
  ['sudo -s rm -rf /', [{ name: 'sudo' }, { name: 'rm', args: ['-rf', '/'], via: 'sudo -s' }]],
  ['env -S "rm -rf /"', [{ name: 'env' }, { known: false, via: 'env -S' }]],
  ['bash -c "$X"', [{ name: 'bash' }, { name: '"$X"', known: false, via: 'bash -c' }]],
  ['eval "echo a; rm b"', [{ name: 'eval' }, { name: 'echo', via: 'eval' }, { name: 'rm', via: 'eval' }]],
  ['eval echo a\\; rm b', [{ name: 'eval' }, { name: 'echo' }, { name: 'rm', via: 'eval' }]],
  ['eval "$X"', [{ name: 'eval' }, { known: false, via: 'eval' }]],
  ['watch -n 5 "ls; rm x"', [{ name: 'watch' }, { name: 'ls', via: 'watch' }, { name: 'rm', via: 'watch' }]],
  // Comments and line continuations.
  ['ls -la # rm -rf /', [{ name: 'ls', args: ['-la'] }]],
  ['echo ok \\\n  more', [{ name: 'echo', args: ['ok', 'more'] }]],
  ['# nothing', []],
];

describe('shell commands of a Bash tool call', () => {
  for (const [src, want] of TABLE)
    it(JSON.stringify(src), () => {
      const r = parseShellCommands(src);
      assert.ok(r.ok, r.ok ? '' : r.error);
      assert.equal(r.commands.length, want.length, JSON.stringify(r.commands.map((c) => c.text)));
      want.forEach((w, i) => assert.deepEqual(pick(r.commands[i]!, w), w, `${JSON.stringify(src)} command ${i}`));
    });

  it('what cannot be parsed, an oversized command, too many commands and too deep nesting are errors', () => {
    const bads = ['echo "unterminated', 'if then fi', 'echo $((', 'a &&', 'echo `x', 'cat <<EOF\nabc', 'f() { ', 'bash -c "echo \\"x"'];
    for (const bad of bads) {
      const r = parseShellCommands(bad);
      assert.equal(r.ok, false, JSON.stringify(bad));
    }
    const big = parseShellCommands(`echo ${'a'.repeat(64 * 1024)}`);
    assert.deepEqual(big, { ok: false, error: 'the command is longer than 64 KiB' });
    const many = parseShellCommands(Array.from({ length: 200 }, (_, i) => `echo ${i}`).join('; '));
    assert.equal(many.ok, false);
    assert.match(many.ok ? '' : many.error, /more than 128 commands/);
    const deep = parseShellCommands('eval eval eval eval eval x');
    assert.equal(deep.ok, false, JSON.stringify(deep));
    assert.match(deep.ok ? '' : deep.error, /nested more than 4 levels/);
  });

  it('plain commands skip the parser and read exactly as the parser reads them', () => {
    for (const c of ['git status', 'ls -la /tmp', 'npm test -- test/x.ts', 'env X=1 rm -rf /', 'bash -c ls', 'sh -xc rm',
      'sudo -u root rm x',
      'ls | xargs -n 1 rm', 'timeout 5 nice rm', 'echo a=b c,d e@f g%h +i : -- -', '  git \t log  ', 'eval rm x', '/usr/bin/env rm',
      'command -v rm', 'busybox sh -c rm', 'watch -n 1 date']) {
      const fast = parseShellCommands(c);
      const slow = parseShellCommands(`${c} ;`);
      assert.ok(fast.ok && slow.ok);
      assert.deepEqual(fast, slow, c);
    }
  });

  it('parses typical commands in well under a millisecond (measured, printed)', () => {
    // CPU time, not wall time: the machine running the tests is shared.
    const cpu = (fn: (i: number) => void, n: number) => {
      const c0 = process.cpuUsage();
      for (let i = 0; i < n; i++) fn(i);
      const c = process.cpuUsage(c0);
      return (c.user + c.system) / n;
    };
    console.log(`# plain ${cpu((i) => parseShellCommands(`git log -${i}`), 2000).toFixed(1)} µs CPU  git log -N`);
    const cmds = ['git status', 'npm test -- test/foo.test.ts 2>&1 | tail -50', 'cd /work && git log --oneline -5 && git diff --stat',
      'for f in *.ts; do echo "$f"; wc -l "$f"; done',
      "find . -name '*.js' -exec grep -l foo {} \\;"];
    for (const c of cmds) {
      // A fresh suffix each round defeats the cache of recent answers: this measures the parse itself.
      for (let i = 0; i < 200; i++) parseShellCommands(`${c} #${i}`);
      const us = cpu((i) => parseShellCommands(`${c} #w${i}`), 500);
      console.log(`# parse ${us.toFixed(1)} µs CPU  ${c}`);
      assert.ok(us < 5000, `${c}: ${us} µs`);
    }
  });
});
