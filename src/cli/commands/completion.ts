import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand } from '../client/base-command.js';

type Tree = { words: Map<string, Set<string>>; flags: Map<string, string[]> };

/** `svc completion bash|zsh|fish`: a shell completion script for commands and their flags. */
export class CompletionCommand extends BaseCommand {
  static override paths = [['completion']];

  static override usage = BaseCommand.Usage({
    category: 'General',
    description: 'Print a shell completion script (bash, zsh or fish) for every command and flag',
    details: `
      The script is generated from this build's commands, so it matches the binary. Load it for the
      current shell, or save it where the shell loads completions from.
    `,
    examples: [
      ['bash, this shell', 'source <($0 completion bash)'],
      ['zsh, saved', '$0 completion zsh > "${fpath[1]}/_svc"'],
      ['fish, saved', '$0 completion fish > ~/.config/fish/completions/svc.fish'],
    ],
  });

  shell = Option.String({ name: 'shell', required: true, validator: t.isEnum(['bash', 'zsh', 'fish'] as const) });

  async execute(): Promise<number> {
    const tree = commandTree(this.cli.definitions());
    const script =
      this.shell === 'fish'
        ? fishScript(tree)
        : this.shell === 'zsh'
          ? `#compdef svc\nautoload -U +X bashcompinit && bashcompinit\n${bashScript(tree)}`
          : bashScript(tree);
    this.context.stdout.write(script);
    return 0;
  }
}

/** Next words after each command prefix ('' for the top), and the flags of each full command. */
function commandTree(definitions: ReadonlyArray<{ path: string; options: ReadonlyArray<{ definition: string }> }>): Tree {
  const words = new Map<string, Set<string>>();
  const flags = new Map<string, string[]>();
  for (const def of definitions) {
    const path = def.path.split(' ').slice(1);
    if (path.length === 0 || path[0]?.startsWith('-')) continue;
    for (let i = 0; i < path.length; i++) {
      const prefix = path.slice(0, i).join(' ');
      if (!words.has(prefix)) words.set(prefix, new Set());
      words.get(prefix)?.add(path[i] as string);
    }
    flags.set(path.join(' '), [
      ...new Set(def.options.flatMap((o) => (o.definition.split(' ')[0] ?? '').split(',')).filter((f) => f.startsWith('-'))),
      '--help',
    ]);
  }
  return { words, flags };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bashScript(tree: Tree): string {
  const cases = [
    ...[...tree.words].map(([prefix, next]) => `    ${quote(prefix)}) words=${quote([...next].sort().join(' '))} ;;`),
    ...[...tree.flags].map(([path, flags]) => `    ${quote(`${path}:flags`)}) words=${quote(flags.join(' '))} ;;`),
  ];
  return `# svc completion for bash: source <(svc completion bash)
_svc() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && break
    path="\${path:+$path }$w"
  done
  if [[ $cur == -* ]]; then path="$path:flags"; fi
  case "$path" in
${cases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _svc svc
`;
}

function fishScript(tree: Tree): string {
  const lines = [
    '# svc completion for fish: svc completion fish > ~/.config/fish/completions/svc.fish',
    'function __svc_path',
    '  set -l words (commandline -opc)',
    '  set -e words[1]',
    '  set -l path',
    '  for w in $words',
    "    string match -q -- '-*' $w; and break",
    '    set path $path $w',
    '  end',
    '  echo (string join " " $path)',
    'end',
    'complete -c svc -f',
  ];
  for (const [prefix, next] of tree.words)
    lines.push(`complete -c svc -n ${quote(`test (__svc_path) = ${quote(prefix)}`)} -a ${quote([...next].sort().join(' '))}`);
  for (const [path, flags] of tree.flags) {
    for (const flag of flags)
      lines.push(
        `complete -c svc -n ${quote(`test (__svc_path) = ${quote(path)}`)} ` +
          `${flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`}`,
      );
  }
  return `${lines.join('\n')}\n`;
}
