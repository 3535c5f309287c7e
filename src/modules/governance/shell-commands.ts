/**
 * A Bash tool command split into the simple commands it would run, so a policy decides each one
 * (docs/governance.md, "Bash commands"). Parsed by mvdan/sh (`mvdan-sh`, its GopherJS build, Bash
 * dialect): lists, pipelines, `&&`/`||`/`;`/`&`, subshells, blocks, `if`/`for`/`while`/`case`,
 * function bodies, command and process substitution (also inside here-documents, redirection
 * targets, assignments, parameter expansions and arithmetic) all yield their commands.
 *
 * A word's value is kept only when it is known before the shell runs: literal text, quotes and
 * backslashes removed (`"r""m"` and `r\m` are `rm`). Anything else — parameter expansion, command
 * substitution, arithmetic, globs, brace expansion (`{rm,-rf,/}`), `$'…'` with escapes — makes the
 * word dynamic: it is shown as its source text and the command is marked `dynamic`; a command whose
 * *name* is dynamic is `known: false`, which the decision denies unless a policy explicitly allows
 * unknown commands. Programs that run other programs are unwrapped as far as their arguments say:
 * `env`, `command`, `exec`, `sudo`, `xargs`, `timeout`, `nice`, `nohup`, … and `find -exec` yield the
 * inner command too (`via` names the wrapper); `sh|bash|… -c STRING`, `eval` and `watch` parse their
 * string as a script of its own (at most 4 levels). Whatever cannot be parsed is an error (denied).
 *
 * The tree is read through GopherJS's internal objects (Go field names, slices as `$array/$offset/
 * $length`): the package's wrappers cost 50–80 µs per field access and `syntax.Walk` milliseconds
 * per command. The version is pinned; the unit tests cover every node type read here.
 */
import { createRequire } from 'node:module';
import { unquoted, unwrap, type ShellCommand, type ShellRedirect, type Word } from './shell-words.js';

export type { ShellCommand, ShellRedirect } from './shell-words.js';

export const MAX_COMMAND_BYTES = 64 * 1024;
const MAX_COMMANDS = 128;
const MAX_NESTING = 4;

export type ShellParse = { ok: true; commands: ShellCommand[] } | { ok: false; error: string };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- GopherJS objects are untyped by nature
type Go = any;
interface Syntax {
  NewParser(): { Parse(src: string, name: string): { __internal_object__: Go } };
}
let parser: ReturnType<Syntax['NewParser']> | undefined;
/** Loaded on first use: the parser is 1.5 MB of JavaScript that only Bash decisions need. */
function shellParser(): ReturnType<Syntax['NewParser']> {
  if (!parser) parser = (createRequire(import.meta.url)('mvdan-sh') as { syntax: Syntax }).syntax.NewParser();
  return parser;
}

class Refusal extends Error {}

const kind = (n: Go): string => (n && n.constructor && typeof n.constructor.string === 'string' ? n.constructor.string : '');
const isNil = (n: Go): boolean => n === undefined || n === null || kind(n) === '' || n === n.constructor.nil;
const list = (s: Go): Go[] => (s && s.$array ? s.$array.slice(s.$offset, s.$offset + s.$length) : []);
/** Go strings are byte strings in GopherJS: decode UTF-8. */
const str = (s: string): string => (/[^\x00-\x7f]/.test(s) ? Buffer.from(s, 'latin1').toString('utf8') : s);

const REDIRECT_OPS: Record<number, string> = {
  54: '>', 55: '>>', 56: '<', 57: '<>', 58: '<&', 59: '>&', 60: '>|', 61: '<<', 62: '<<-', 63: '<<<', 64: '&>', 65: '&>>',
};
const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&']);

interface Ctx {
  redirects: ShellRedirect[];
  writes: string[];
  dynamicRedirect: boolean;
  background: boolean;
}
interface Nested {
  src: string;
  via: string;
  depth: number;
  ctx: Ctx;
}

class Walker {
  readonly #buf: Buffer | null;
  constructor(
    readonly src: string,
    readonly via: string,
    readonly depth: number,
    readonly out: ShellCommand[],
    readonly nested: Nested[],
  ) {
    this.#buf = Buffer.byteLength(src) === src.length ? null : Buffer.from(src);
  }

  /** Source text between two byte offsets (the parser's positions are UTF-8 byte offsets). */
  #slice(n: Go): string {
    const a = n.Pos().Offset() as number;
    const b = n.End().Offset() as number;
    return this.#buf ? this.#buf.subarray(a, b).toString('utf8') : this.src.slice(a, b);
  }

  stmts(s: Go, ctx: Ctx): void {
    for (const st of list(s)) this.stmt(st, ctx);
  }

  stmt(s: Go, outer: Ctx): void {
    const ctx: Ctx = { ...outer, redirects: [...outer.redirects], writes: [...outer.writes] };
    ctx.background = outer.background || s.Background === true || s.Coprocess === true;
    for (const r of list(s.Redirs)) this.#redirect(r, ctx);
    if (isNil(s.Cmd)) {
      if (ctx.redirects.length > outer.redirects.length) this.#emit([], [], ctx, this.via);
      return;
    }
    this.#command(s.Cmd, ctx);
  }

  #command(c: Go, ctx: Ctx): void {
    switch (kind(c)) {
      case '*syntax.CallExpr': {
        const assigns = list(c.Assigns).map((a) => this.#assign(a, ctx));
        const words = list(c.Args).map((w) => this.word(w, ctx));
        this.call(words, assigns, ctx, this.via);
        return;
      }
      case '*syntax.BinaryCmd':
        this.stmt(c.X, ctx);
        this.stmt(c.Y, ctx);
        return;
      case '*syntax.Block':
      case '*syntax.Subshell':
        return this.stmts(c.Stmts, ctx);
      case '*syntax.IfClause':
        this.stmts(c.Cond, ctx);
        this.stmts(c.Then, ctx);
        if (!isNil(c.Else)) this.#command(c.Else, ctx);
        return;
      case '*syntax.WhileClause':
        this.stmts(c.Cond, ctx);
        return this.stmts(c.Do, ctx);
      case '*syntax.ForClause':
        if (kind(c.Loop) === '*syntax.WordIter') for (const w of list(c.Loop.Items)) this.word(w, ctx);
        else if (kind(c.Loop) === '*syntax.CStyleLoop') for (const x of [c.Loop.Init, c.Loop.Cond, c.Loop.Post]) this.#arith(x, ctx);
        else throw new Refusal(`unsupported loop ${kind(c.Loop)}`);
        return this.stmts(c.Do, ctx);
      case '*syntax.CaseClause':
        this.word(c.Word, ctx);
        for (const item of list(c.Items)) {
          for (const w of list(item.Patterns)) this.word(w, ctx);
          this.stmts(item.Stmts, ctx);
        }
        return;
      case '*syntax.FuncDecl':
        return this.stmt(c.Body, ctx);
      case '*syntax.ArithmCmd':
        return this.#arith(c.X, ctx);
      case '*syntax.TestClause':
        return this.#arith(c.X, ctx);
      case '*syntax.LetClause':
        for (const x of list(c.Exprs)) this.#arith(x, ctx);
        return;
      case '*syntax.DeclClause': {
        const args = list(c.Args).map((a) => this.#assign(a, ctx));
        const name: Word = { value: str(c.Variant.Value), known: true, src: str(c.Variant.Value) };
        this.#emit([name, ...args], [], ctx, this.via);
        return;
      }
      case '*syntax.TimeClause':
        if (!isNil(c.Stmt)) this.stmt(c.Stmt, ctx);
        return;
      case '*syntax.CoprocClause':
        return this.stmt(c.Stmt, { ...ctx, background: true });
      default:
        throw new Refusal(`unsupported shell construct ${kind(c) || 'unknown'}`);
    }
  }

  /** Substitutions run in a shell of their own: they inherit no redirection. */
  #sub(ctx: Ctx): Ctx {
    return { redirects: [], writes: [], dynamicRedirect: false, background: ctx.background };
  }

  word(w: Go, ctx: Ctx): Word {
    let value = '';
    let known = true;
    // Brace expansion may span parts (`{"r"m,x}`): an unquoted `{`, then `,` or `..`, then `}`.
    const brace = { open: false, sep: false, bracket: false };
    for (const p of list(w.Parts)) {
      switch (kind(p)) {
        case '*syntax.Lit': {
          const l = unquoted(str(p.Value), brace);
          value += l.value;
          if (l.dynamic) known = false;
          break;
        }
        case '*syntax.SglQuoted':
          value += str(p.Value);
          if (p.Dollar === true && str(p.Value).includes('\\')) known = false;
          break;
        case '*syntax.DblQuoted':
          if (p.Dollar === true) known = false;
          for (const q of list(p.Parts)) {
            if (kind(q) === '*syntax.Lit') value += str(q.Value).replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
            else {
              known = false;
              this.#part(q, ctx);
            }
          }
          break;
        default:
          known = false;
          this.#part(p, ctx);
      }
    }
    return { value, known, src: this.#slice(w) };
  }

  /** A word part whose value is only known at run time: find the commands it runs. */
  #part(p: Go, ctx: Ctx): void {
    switch (kind(p)) {
      case '*syntax.CmdSubst':
      case '*syntax.ProcSubst':
        return this.stmts(p.Stmts, this.#sub(ctx));
      case '*syntax.ArithmExp':
        return this.#arith(p.X, ctx);
      case '*syntax.ParamExp':
        if (!isNil(p.Index)) this.#arith(p.Index, ctx);
        if (!isNil(p.Slice)) for (const x of [p.Slice.Offset, p.Slice.Length]) this.#arith(x, ctx);
        if (!isNil(p.Repl)) for (const x of [p.Repl.Orig, p.Repl.With]) if (!isNil(x)) this.word(x, ctx);
        if (!isNil(p.Exp) && !isNil(p.Exp.Word)) this.word(p.Exp.Word, ctx);
        return;
      case '*syntax.BraceExp':
        for (const x of list(p.Elems)) this.word(x, ctx);
        return;
      case '*syntax.ExtGlob':
        return;
      default:
        throw new Refusal(`unsupported word part ${kind(p) || 'unknown'}`);
    }
  }

  /** Arithmetic (`$((…))`, `((…))`, `let`, indices) and `[[ … ]]` expressions: only their words can run commands. */
  #arith(x: Go, ctx: Ctx): void {
    if (isNil(x)) return;
    switch (kind(x)) {
      case '*syntax.Word':
        this.word(x, ctx);
        return;
      case '*syntax.BinaryArithm':
      case '*syntax.BinaryTest':
        this.#arith(x.X, ctx);
        return this.#arith(x.Y, ctx);
      case '*syntax.UnaryArithm':
      case '*syntax.ParenArithm':
      case '*syntax.UnaryTest':
      case '*syntax.ParenTest':
        return this.#arith(x.X, ctx);
      default:
        throw new Refusal(`unsupported expression ${kind(x) || 'unknown'}`);
    }
  }

  /** `NAME=value` (also `a[i]=v`, `a=(…)`, `+=`, and the bare words of `declare`) as one word. */
  #assign(a: Go, ctx: Ctx): Word {
    let known = true;
    if (!isNil(a.Index)) {
      this.#arith(a.Index, ctx);
      known = false;
    }
    if (!isNil(a.Array)) {
      for (const e of list(a.Array.Elems)) {
        if (!isNil(e.Index)) this.#arith(e.Index, ctx);
        if (!isNil(e.Value)) this.word(e.Value, ctx);
      }
      known = false;
    }
    const v = isNil(a.Value) ? null : this.word(a.Value, ctx);
    const src = this.#slice(a);
    if (!known) return { value: src, known, src };
    const name = isNil(a.Name) ? '' : str(a.Name.Value);
    if (a.Naked === true) return v ? v : { value: name, known: true, src };
    return { value: `${name}${a.Append === true ? '+=' : '='}${v ? v.value : ''}`, known: v ? v.known : true, src };
  }

  #redirect(r: Go, ctx: Ctx): void {
    const op = REDIRECT_OPS[r.Op as number];
    if (!op) throw new Refusal(`unsupported redirection operator ${String(r.Op)}`);
    const target = this.word(r.Word, ctx);
    if (!isNil(r.Hdoc)) this.word(r.Hdoc, ctx);
    const t = target.known ? target.value : target.src;
    const fd = isNil(r.N) ? '' : str(r.N.Value);
    ctx.redirects.push({ op, fd, target: t });
    if (!target.known) ctx.dynamicRedirect = true;
    const dup = (op === '>&' || op === '<&') && /^([0-9]+-?|-)$/.test(t);
    if (WRITE_OPS.has(op) && !dup && t !== '/dev/null') ctx.writes.push(t);
  }

  call(words: Word[], assigns: Word[], ctx: Ctx, via: string): void {
    this.#emit(words, assigns, ctx, via);
    for (const u of unwrap(words)) {
      if ('run' in u) this.call(u.run, [], ctx, u.via);
      else if ('script' in u) this.#nest(u.script, u.via, ctx);
      else this.#emit([{ value: u.unknown.src, known: false, src: u.unknown.src }], [], ctx, u.via);
    }
  }

  #nest(src: string, via: string, ctx: Ctx): void {
    if (this.depth + 1 > MAX_NESTING) throw new Refusal(`commands nested more than ${MAX_NESTING} levels deep (${via})`);
    this.nested.push({ src, via, depth: this.depth + 1, ctx });
  }

  #emit(words: Word[], assigns: Word[], ctx: Ctx, via: string): void {
    if (this.out.length >= MAX_COMMANDS) throw new Refusal(`more than ${MAX_COMMANDS} commands`);
    const shown = (w: Word) => (w.known ? w.value : w.src);
    const name = words[0];
    const args = words.slice(1).map(shown);
    const redirText = ctx.redirects.map((r) => `${r.fd}${r.op}${r.target}`);
    const nameText = name ? shown(name) : '';
    this.out.push({
      name: nameText,
      base: nameText.slice(nameText.lastIndexOf('/') + 1),
      args,
      args_text: args.join(' '),
      known: name ? name.known : true,
      dynamic: ctx.dynamicRedirect || [...words, ...assigns].some((w) => !w.known),
      assigns: assigns.map(shown),
      redirects: ctx.redirects,
      writes: ctx.writes,
      background: ctx.background,
      via,
      text: [...assigns.map(shown), ...(name ? [nameText] : []), ...args, ...redirText].join(' '),
    });
  }
}

/**
 * Most agent commands are one plain command (`git status`, `npm test`): words of characters no shell
 * expands or splits on, which the parser would return as they are. They skip the parser (its cost
 * is ~100 µs); the unit tests check both paths agree.
 */
const PLAIN = /^[ \t]*[A-Za-z0-9_./:=@%+,-]+([ \t]+[A-Za-z0-9_./:=@%+,-]+)*[ \t]*$/;
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in',
  'function', 'select', 'time', 'coproc', 'declare', 'local', 'export', 'readonly', 'typeset', 'nameref', 'let']);
const recent = new Map<string, ShellParse>();
const RECENT = 1024;

/**
 * The simple commands of `src`, in source order; an error for what cannot be parsed or is too large.
 * Agents repeat commands (`git status`, the test command), so recent answers are kept (bounded);
 * the answer is shared: callers must not change it.
 */
export function parseShellCommands(src: string): ShellParse {
  const hit = recent.get(src);
  if (hit) return hit;
  const out = parse(src);
  if (recent.size >= RECENT) recent.clear();
  if (src.length <= 4096) recent.set(src, out);
  return out;
}

function parse(src: string): ShellParse {
  if (Buffer.byteLength(src) > MAX_COMMAND_BYTES) return { ok: false, error: 'the command is longer than 64 KiB' };
  const out: ShellCommand[] = [];
  const queue: Nested[] = [{ src, via: '', depth: 0, ctx: { redirects: [], writes: [], dynamicRedirect: false, background: false } }];
  try {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const plain = PLAIN.test(next.src) ? next.src.trim().split(/[ \t]+/) : null;
      if (plain && !plain[0]!.includes('=') && !RESERVED.has(plain[0]!)) {
        const words = plain.map((value) => ({ value, known: true, src: value }));
        new Walker(next.src, next.via, next.depth, out, queue).call(words, [], next.ctx, next.via);
        continue;
      }
      let file: Go;
      try {
        file = shellParser().Parse(next.src, 'command').__internal_object__;
      } catch (err) {
        const e = err as { Error?: () => string; message?: string };
        const msg = typeof e?.Error === 'function' ? e.Error() : (e?.message ?? String(err));
        return { ok: false, error: `${next.via ? `the script of ${next.via}: ` : ''}${str(msg).replace(/^command:/, '')}` };
      }
      new Walker(next.src, next.via, next.depth, out, queue).stmts(file.Stmts, next.ctx);
    }
  } catch (err) {
    // A tree this reader does not expect is refused, never guessed at (fail closed).
    return { ok: false, error: err instanceof Refusal ? err.message : `the command could not be read: ${(err as Error).message}` };
  }
  return { ok: true, commands: out };
}
