/**
 * The lean `svc claude-hook` (issue 47): what an agent runs before and after every tool call, so it
 * starts on Node's built-ins alone — no command tree, no undici, no YAML unless a saved context
 * exists, nothing of src/core or src/modules. `bin/svc.js` imports this module directly when its
 * first argument is `claude-hook`.
 *
 * Fail closed, whatever happens: every outcome but a decision the server made in time is a deny,
 * printed as hook JSON on stdout with a one-line reason on stderr, and exit 2 (the only exit code
 * Claude Code treats as blocking). The deadline (`--timeout`, default 5 s, stdin included) ends
 * the process with `process.exit(2)`, whether or not stdin was ever closed; an answer that arrives
 * after it is a deny; an answer larger than {@link MAX_ANSWER_BYTES} is a deny and its read is
 * aborted. Reasons never name the server, token file or pin: Claude Code shows them to the model.
 */
import type { Readable, Writable } from 'node:stream';
import { readHookConfig, type HookConfig } from './config.js';
import { HookFailure } from './failure.js';
import { decide } from './transport.js';

export const HOOK_DENY_EXIT = 2;
export const HOOK_DEFAULT_TIMEOUT_MS = 5000;
/** The decision endpoint answers a few hundred bytes; anything near this is not a decision. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** Bound on the hook input (a Write tool call carries the file's content). */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

const KNOWN = ['hook_event_name', 'session_id', 'tool_name', 'tool_input', 'cwd', 'permission_mode', 'transcript_path'] as const;
const DECISIONS = new Set(['allow', 'deny', 'ask']);

export type HookIo = {
  env: Record<string, string | undefined>;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** Ends the process; the default is process.exit. */
  exit: (code: number) => void;
};

/** The agent's hook-output JSON for a decision on one hook event. */
export function hookOutput(event: string, decision: 'allow' | 'deny' | 'ask', reason: string): Record<string, unknown> {
  if (event === 'PreToolUse')
    return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } };
  // After the call ran there is nothing to allow or ask: only a flag (a deny of a policy) is worth telling the model.
  if (decision !== 'deny') return {};
  return { decision: 'block', reason };
}

/** Entry point of `bin/svc.js claude-hook …` (argv without node, script and `claude-hook`). */
export async function main(argv: string[]): Promise<void> {
  await runHook(argv, { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, exit: process.exit });
}

/** Runs one hook call; resolves after `io.exit` was called exactly once. */
export async function runHook(argv: string[], io: HookIo): Promise<void> {
  const started = Date.now();
  let event = 'PreToolUse';
  let done = false;
  const finish = (code: number, out: Record<string, unknown>, why?: string): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    io.stdout.write(`${JSON.stringify(out)}\n`);
    if (why !== undefined) io.stderr.write(`${why}\n`);
    io.exit(code);
  };
  const deny = (why: string): void => {
    const reason =
      event === 'PreToolUse' ? `svc could not decide, so the call is denied: ${why}` : `svc could not record this call: ${why}`;
    finish(HOOK_DENY_EXIT, hookOutput(event, 'deny', reason), reason);
  };
  let config: HookConfig | undefined;
  let budget = HOOK_DEFAULT_TIMEOUT_MS;
  let parseError: string | undefined;
  try {
    config = readHookConfig(argv, io.env);
    budget = config.timeoutMs;
  } catch (err) {
    parseError = (err as Error).message;
  }
  // Armed before anything that can wait: the deadline holds whatever stdin, DNS or the server do.
  const timer = setTimeout(() => deny(`no decision within ${budget} ms`), Math.max(1, budget - (Date.now() - started)));
  if (parseError !== undefined || config === undefined) return deny(parseError ?? 'no configuration');
  try {
    const input = parseHook(await readInput(io.stdin));
    event = input['hook_event_name'] as string;
    const body = { ...input, ...(config.agent ? { agent_id: config.agent } : {}) };
    const answer = await decide(await config.resolve(), JSON.stringify(body), {
      deadline: started + budget,
      maxBytes: MAX_ANSWER_BYTES,
    });
    if (done) return;
    if (Date.now() - started > budget) return deny(`the answer came after the ${budget} ms deadline`);
    const d = answer as { decision?: unknown; reason?: unknown; revision?: unknown; decision_id?: unknown };
    if (typeof d !== 'object' || d === null || typeof d.decision !== 'string' || typeof d.reason !== 'string')
      return deny('malformed answer from the decision endpoint');
    if (!DECISIONS.has(d.decision)) return deny(`unknown decision ${JSON.stringify(d.decision).slice(0, 40)}`);
    const tail = `(svc decision ${String(d.decision_id)}, policy revision ${d.revision === null ? 'none' : String(d.revision)})`;
    const reason = event === 'PreToolUse' ? `${d.reason} ${tail}` : `svc policy flags this call, which already ran: ${d.reason} ${tail}`;
    finish(0, hookOutput(event, d.decision as 'allow' | 'deny' | 'ask', reason));
  } catch (err) {
    if (err instanceof HookFailure) return deny(err.message);
    // Anything unexpected: a deny with a reason free of configuration (SERVICE_DEBUG adds the detail for an operator).
    const detail = io.env.SERVICE_DEBUG ? `: ${(err as Error).stack ?? String(err)}`.replace(/\s+/g, ' ') : '';
    deny(`internal error${detail}`);
  }
}

/** The hook JSON, kept to the fields the endpoint takes (the agent may add fields of its own). */
function parseHook(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new HookFailure('the hook input on stdin is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new HookFailure('the hook input on stdin is not a JSON object');
  const o = v as Record<string, unknown>;
  for (const k of ['hook_event_name', 'session_id', 'tool_name'] as const)
    if (typeof o[k] !== 'string') throw new HookFailure(`the hook input lacks ${k}`);
  const out: Record<string, unknown> = {};
  for (const k of KNOWN) if (o[k] !== undefined) out[k] = o[k];
  if (typeof out['tool_input'] !== 'object' || out['tool_input'] === null || Array.isArray(out['tool_input'])) out['tool_input'] = {};
  return out;
}

async function readInput(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stream) {
    const b = typeof c === 'string' ? Buffer.from(c) : (c as Buffer);
    size += b.length;
    if (size > MAX_INPUT_BYTES) throw new HookFailure(`the hook input exceeds ${MAX_INPUT_BYTES} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}
