/**
 * The word-level rules of shell-commands.ts: quote removal of unquoted literals (globs and brace
 * expansion make a word dynamic) and how wrappers (`env`, `sudo`, `xargs`, `sh -c`, …) name the
 * command they run.
 */

export interface ShellRedirect {
  op: string;
  /** the file descriptor written before the operator (`2` in `2>`), else "" */
  fd: string;
  target: string;
}

export interface ShellCommand {
  /** the command word, quotes removed; its source text when not known (`$X`); "" for assignments or redirections alone */
  name: string;
  /** `name` after its last `/` */
  base: string;
  args: string[];
  args_text: string;
  /** the name is known before the command runs */
  known: boolean;
  /** some word (name, argument, assignment, redirection target) is not known before it runs */
  dynamic: boolean;
  assigns: string[];
  redirects: ShellRedirect[];
  /** files written by output redirections (not `/dev/null`, not `>&2`) */
  writes: string[];
  background: boolean;
  /** "" or the wrapper that runs this command: `env`, `sudo`, `xargs`, `find -exec`, `bash -c`, `eval`, … */
  via: string;
  /** assignments, name, arguments and redirections joined by single spaces */
  text: string;
}

/** A word: its value when known before the shell runs, else its source text only. */
export interface Word {
  value: string;
  known: boolean;
  src: string;
}

export const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh']);
/** Wrappers that run their remaining arguments as a command: options taking a value, positional arguments before it. */
export const WRAPPERS: Record<string, { opts?: string[]; positional?: number; assigns?: boolean }> = {
  env: { opts: ['-u', '--unset', '-C', '--chdir'], assigns: true },
  command: {}, builtin: {}, exec: { opts: ['-a'] }, nohup: {}, setsid: {}, busybox: {}, unbuffer: {},
  nice: { opts: ['-n', '--adjustment'] },
  time: { opts: ['-f', '--format', '-o', '--output'] },
  timeout: { opts: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  stdbuf: { opts: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  ionice: { opts: ['-c', '--class', '-n', '--classdata'] },
  chroot: { opts: ['--userspec', '--groups'], positional: 1 },
  sudo: { opts: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '--user', '--group', '--chdir', '--prompt'], assigns: true },
  doas: { opts: ['-u', '-C'] },
  xargs: { opts: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--max-args', '--max-procs'] },
};

/** Unquoted `{` / `[` seen so far in a word: a brace or bracket expansion may span its parts (`{"r"m,x}`). */
export interface OpenBrackets {
  open: boolean;
  sep: boolean;
  bracket: boolean;
}

/**
 * Quote removal of an unquoted literal; globs (`*`, `?`, `[…]`) and brace expansion make it
 * dynamic. A `[` without a later `]` is literal in Bash (the `[` command), so it is not a glob.
 */
export function unquoted(v: string, brace: OpenBrackets): { value: string; dynamic: boolean } {
  let value = '';
  let dynamic = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      if (i + 1 < v.length && v[i + 1] !== '\n') value += v[i + 1];
      i++;
      continue;
    }
    if (c === '*' || c === '?') dynamic = true;
    else if (c === '[') brace.bracket = true;
    else if (c === ']' && brace.bracket) dynamic = true;
    else if (c === '{') brace.open = true;
    else if (brace.open && (c === ',' || (c === '.' && v[i + 1] === '.'))) brace.sep = true;
    else if (c === '}' && brace.open && brace.sep) dynamic = true;
    value += c;
  }
  return { value, dynamic };
}

/** The arguments after a wrapper's options (and `NAME=value` words, and its positional arguments). */
export function skipOptions(args: Word[], spec: { opts?: string[]; positional?: number; assigns?: boolean }): Word[] {
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (!a.known) break;
    if (a.value === '--') {
      i++;
      break;
    }
    if (a.value.startsWith('-') && a.value.length > 1) i += spec.opts?.includes(a.value) ? 2 : 1;
    else if (spec.assigns && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a.value)) i++;
    else break;
  }
  return args.slice(Math.min(args.length, i + (spec.positional ?? 0)));
}

/** For `sh`/`bash`/…: the `-c` script, if the options ask for one (`-c`, `-xc`, `-lc`, `-o opt -c`). */
export function shellScript(args: Word[]): { script?: Word } {
  let c = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // A word that may be an option (`bash $OPTS x`) leaves the script unknowable.
    if (!a.known) return { script: a };
    if (a.value === '--') return c ? { script: args[i + 1] ?? { value: '', known: true, src: '' } } : {};
    if (a.value === '--rcfile' || a.value === '--init-file') i++;
    else if (a.value.startsWith('--')) continue;
    else if (/^[-+][A-Za-z]+$/.test(a.value)) {
      if (a.value.startsWith('-') && a.value.includes('c')) c = true;
      if (/[oO]/.test(a.value)) i++;
    } else return c ? { script: a } : {};
  }
  return {};
}

/** What a wrapper runs: a command (its words), a script to parse, or a word that cannot be known. */
export type Unwrapped = { run: Word[]; via: string } | { script: string; via: string } | { unknown: Word; via: string };

/** The commands a command runs through its arguments, as far as they say (none for ordinary commands). */
export function unwrap(words: Word[]): Unwrapped[] {
  const name = words[0];
  if (!name || !name.known) return [];
  const base = name.value.slice(name.value.lastIndexOf('/') + 1);
  const args = words.slice(1);
  if (SHELLS.has(base)) {
    const s = shellScript(args).script;
    if (s === undefined) return [];
    return [s.known ? { script: s.value, via: `${base} -c` } : { unknown: s, via: `${base} -c` }];
  }
  if (base === 'eval' || base === 'watch') {
    const rest = base === 'watch' ? skipOptions(args, { opts: ['-n', '--interval'] }) : args;
    const dyn = rest.find((w) => !w.known);
    if (dyn) return [{ unknown: dyn, via: base }];
    return rest.length === 0 ? [] : [{ script: rest.map((w) => w.value).join(' '), via: base }];
  }
  if (base === 'find') {
    const out: Unwrapped[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (!a.known || !['-exec', '-execdir', '-ok', '-okdir'].includes(a.value)) continue;
      let j = i + 1;
      while (j < args.length && !(args[j]!.known && (args[j]!.value === ';' || args[j]!.value === '+'))) j++;
      if (j > i + 1) out.push({ run: args.slice(i + 1, j), via: `find ${a.value}` });
      i = j;
    }
    return out;
  }
  if (base === 'su' || base === 'runuser') {
    // `su [user] -c SCRIPT`: the script is run by the user's shell.
    const i = args.findIndex((w) => !w.known || w.value === '-c' || w.value === '--command' || w.value.startsWith('--command='));
    const w = i < 0 ? undefined : args[i]!.known && args[i]!.value.startsWith('--command=') ? args[i] : args[i + 1];
    if (i < 0 || !w) return [];
    if (!args[i]!.known || !w.known) return [{ unknown: args[i]!.known ? w : args[i]!, via: `${base} -c` }];
    return [{ script: w.value.replace(/^--command=/, ''), via: `${base} -c` }];
  }
  const spec = WRAPPERS[base];
  if (!spec) return [];
  const inner = skipOptions(args, spec);
  const opts = args.slice(0, args.length - inner.length);
  const dyn = opts.find((w) => !w.known);
  if (dyn) return [{ unknown: dyn, via: base }];
  // `env -S "cmd args"` splits a string of its own; `sudo -s`/`-i` hands the command to a shell.
  const split = opts.find((w) => base === 'env' && /^(-S|--split-string)/.test(w.value));
  if (split) return [{ unknown: split, via: 'env -S' }];
  if (base === 'sudo' && opts.some((w) => /^-[A-Za-z]*[si]|^--(shell|login)$/.test(w.value)) && inner.length > 0)
    return [{ script: inner.map((w) => w.value).join(' '), via: 'sudo -s' }];
  return inner.length === 0 ? [] : [{ run: inner, via: base }];
}
