/**
 * The help a newcomer meets: the command list with the shared client flags printed once, help
 * for a group (`svc agent --help`), "did you mean" for a mistyped command, and option values
 * named after their flag (`--server <server>`) where clipanion prints `#0`.
 */
import { Cli } from 'clipanion';
import type { BaseContext, CommandClass, Definition } from 'clipanion';
import { ClientCommand } from './client/base-command.js';

/** The flags every client command shares (ClientCommand), printed once under "Client flags". */
export const CLIENT_FLAGS = [
  '--server',
  '--tenant',
  '--token',
  '--token-file',
  '--ca-cert',
  '--pin-sha256',
  '--insecure',
  '--allow-cleartext',
  '--timeout',
  '--context',
];

/** `--server #0` → `--server <server>`, `-o,--output #0` → `-o,--output <output>`; any other `#n` → `<value>`. */
export function namePlaceholders(text: string): string {
  return text.replace(/((?:-[a-zA-Z],)?--([a-z0-9][a-z0-9-]*)) #0/g, '$1 <$2>').replace(/ #\d+/g, ' <value>');
}

/** clipanion's Cli with svc's help: placeholders named, the command list grouped with client flags once. */
export class SvcCli extends Cli<BaseContext> {
  readonly #commands: CommandClass[] = [];

  override register(command: CommandClass<BaseContext>): void {
    this.#commands.push(command);
    super.register(command);
  }

  override usage(command: Parameters<Cli<BaseContext>['usage']>[0] = null, opts: Parameters<Cli<BaseContext>['usage']>[1] = {}): string {
    return command === null ? this.#overview() : super.usage(command, opts);
  }

  /** Every usage line and option definition (help, definitions, docs/cli.md) passes here: name the placeholders. */
  protected override getUsageByIndex(
    n: number,
    opts?: { detailed?: boolean; inlineOptions?: boolean },
  ): ReturnType<Cli<BaseContext>['getUsageByIndex']> {
    const { usage, options } = super.getUsageByIndex(n, opts);
    return { usage: namePlaceholders(usage), options: options.map((o) => ({ ...o, definition: namePlaceholders(o.definition) })) };
  }

  /** Every command path (without `svc`), e.g. `['agent', 'ls']`, documented commands only. */
  paths(): string[][] {
    return this.#commands
      .filter((c) => c.usage !== undefined)
      .flatMap((c) => (c.paths ?? []).filter((p) => p.length > 0 && !p[0]?.startsWith('-')));
  }

  /** One line per command: path, positionals and its own options (not the client flags), then its description. */
  #lines(filter: (path: string[]) => boolean): Map<string, string[]> {
    const byCategory = new Map<string, string[]>();
    const defs = new Map(super.definitions().map((d) => [d.path, d]));
    for (const command of this.#commands) {
      const path = command.paths?.[0];
      if (command.usage === undefined || path === undefined || path.length === 0 || path[0]?.startsWith('-') || !filter(path)) continue;
      const def = defs.get(['svc', ...path].join(' '));
      if (def === undefined) continue;
      const client = command.prototype instanceof ClientCommand;
      const own = def.options
        .filter(
          (o) =>
            !/(^|,)(-o|--output)\b/.test(o.definition) && !(client && CLIENT_FLAGS.some((f) => o.definition.split(/[ ,]/).includes(f))),
        )
        .map((o) => (o.required ? `<${o.definition}>` : `[${o.definition}]`));
      const line = `  ${namePlaceholders([def.usage, ...own].join(' '))}\n    ${(command.usage.description ?? '').trim()}`;
      const category = command.usage.category ?? 'General';
      byCategory.set(category, [...(byCategory.get(category) ?? []), line]);
    }
    for (const lines of byCategory.values()) lines.sort();
    return byCategory;
  }

  #overview(): string {
    const out = [`${this.binaryLabel ?? 'svc'} - ${this.binaryVersion ?? ''}`, '', '  $ svc <command> [flags]', ''];
    const byCategory = this.#lines(() => true);
    for (const category of [...byCategory.keys()].sort())
      out.push(category, '', ...(byCategory.get(category) ?? []).flatMap((l) => [l, '']));
    out.push(
      ...clientFlagsSection(this.#clientDefinition()),
      '',
      "Run `svc <command> --help` for a command's details, `svc <group> --help` (e.g. `svc agent --help`) for a group.",
      '',
    );
    return out.join('\n');
  }

  /** Help of a group of commands (`svc agent --help`): its commands with their descriptions. */
  groupUsage(prefix: readonly string[]): string {
    const byCategory = this.#lines((p) => prefix.every((w, i) => p[i] === w) && p.length > prefix.length);
    const out = [`  $ svc ${prefix.join(' ')} <command> [flags]`, ''];
    for (const category of [...byCategory.keys()].sort())
      out.push(category, '', ...(byCategory.get(category) ?? []).flatMap((l) => [l, '']));
    out.push(
      'Client flags (--server, --token, --context, …) are listed once in `svc --help`; `svc <command> --help` shows every flag of a ' +
        'command.',
      '',
    );
    return out.join('\n');
  }

  #clientDefinition(): Definition | undefined {
    const status = this.#commands.find((c) => c.prototype instanceof ClientCommand && c.usage !== undefined);
    const path = status?.paths?.[0];
    return path ? this.definitions().find((d) => d.path === ['svc', ...path].join(' ')) : undefined;
  }
}

function clientFlagsSection(def: Definition | undefined): string[] {
  const options = (def?.options ?? []).filter(
    (o) => CLIENT_FLAGS.some((f) => o.definition.split(/[ ,]/).includes(f)) || /--output/.test(o.definition),
  );
  const width = Math.max(0, ...options.map((o) => o.definition.length));
  return [
    'Client flags (every command that talks to a server; -o also on the others)',
    '',
    ...options.map((o) => `  ${o.definition.padEnd(width)}  ${(o.description ?? '').trim()}`),
  ];
}

/**
 * Where a command line that did not parse is a group (every word so far begins some command path
 * and none ends there): `svc agent`, `svc accessmap attack-paths`. Returns the group's words.
 */
export function groupOf(argv: readonly string[], paths: readonly string[][]): string[] | undefined {
  const words = leadingWords(argv);
  if (words.length === 0) return undefined;
  const under = paths.filter((p) => p.length > words.length && words.every((w, i) => p[i] === w));
  const exact = paths.some((p) => p.length === words.length && words.every((w, i) => p[i] === w));
  return under.length > 0 && !exact ? words : undefined;
}

/** The nearest command path to a mistyped command line, if one is close enough to be what was meant. */
export function suggestCommand(argv: readonly string[], paths: readonly string[][]): string | undefined {
  const words = leadingWords(argv);
  if (words.length === 0) return undefined;
  let best: { path: string; distance: number } | undefined;
  for (const path of paths) {
    const typed = words.slice(0, path.length).join(' ');
    const wanted = path.join(' ');
    const distance = editDistance(typed, wanted);
    if (distance > 0 && distance <= Math.max(2, Math.floor(wanted.length / 4)) && (best === undefined || distance < best.distance))
      best = { path: wanted, distance };
  }
  return best?.path;
}

/** The longest run of leading words that names a group (`svc agent frobnicate` → `agent`). */
export function enclosingGroup(argv: readonly string[], paths: readonly string[][]): string[] | undefined {
  const words = leadingWords(argv);
  for (let k = words.length; k > 0; k--) {
    const group = groupOf(words.slice(0, k), paths);
    if (group !== undefined) return group;
  }
  return undefined;
}

function leadingWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  return words;
}

/** Levenshtein distance (insert, delete, substitute), for "did you mean". */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
