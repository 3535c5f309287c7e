/**
 * `svc claude-hook`: the hook client an agent tool runs before (and after) every tool call. It reads
 * the hook JSON on stdin, asks `POST /v1/m/governance/pep/decisions`, and prints the agent's
 * hook-output JSON. It fails closed (spec Authentication 8): every failure — no configuration,
 * unreachable server, TLS error, timeout, non-2xx, malformed answer, unknown decision, malformed
 * stdin — is a deny, printed as hook JSON on stdout with the reason on stderr and exit code 2,
 * which Claude Code treats as a blocking error whatever it makes of stdout.
 *
 * Exit codes: 0 the server decided (allow, ask or deny: the hook JSON says which); 2 the client
 * denied because it could not get a decision. The whole exchange, reading stdin included, is
 * bounded by `--timeout` (default 5 s).
 */
import { BaseCommand, ClientCommand } from '../client/base-command.js';
import { Option } from 'clipanion';

const KNOWN = ['hook_event_name', 'session_id', 'tool_name', 'tool_input', 'cwd', 'permission_mode', 'transcript_path'] as const;
const DECISIONS = new Set(['allow', 'deny', 'ask']);
export const HOOK_DENY_EXIT = 2;
export const HOOK_DEFAULT_TIMEOUT_MS = 5000;

/** The agent's hook-output JSON for a decision on one hook event. */
export function hookOutput(event: string, decision: 'allow' | 'deny' | 'ask', reason: string): Record<string, unknown> {
  if (event === 'PreToolUse')
    return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } };
  // Other events know no "ask": anything but allow blocks.
  if (decision === 'allow') return {};
  return { decision: 'block', reason };
}

export class ClaudeHookCommand extends ClientCommand {
  static override paths = [['claude-hook']];

  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Hook client for Claude Code: ask svc to decide a tool call (reads hook JSON on stdin); denies on any failure',
    details:
      'Prints the hook-output JSON. Exit 0: the server decided (allow, ask or deny). Exit 2: the client could not get a decision ' +
      '(unreachable, TLS, timeout, non-2xx, malformed answer, unknown decision, malformed input) and denied. `--timeout` bounds ' +
      'everything (default 5s). Credentials: --token/--token-file, then $SERVICE_TOKEN, then the saved context.',
    examples: [
      ['In .claude/settings.json hooks', 'svc claude-hook --server https://svc.example:8443 --token-file /etc/svc/hook-token --timeout 5s'],
    ],
  });

  agent = Option.String('--agent', {
    description: 'Agent id sent with each decision (default: $SERVICE_AGENT_ID; else the credential identifies the agent)',
  });

  protected override defaultTimeoutMs = HOOK_DEFAULT_TIMEOUT_MS;

  override async validateAndExecute(): Promise<number> {
    // Not BaseCommand's error policy: every failure, usage errors included, must be a deny.
    try {
      return await this.execute();
    } catch (err) {
      return this.deny('PreToolUse', `svc could not decide: ${(err as Error).message}`);
    }
  }

  async execute(): Promise<number> {
    let event = 'PreToolUse';
    const started = Date.now();
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const work = (async (): Promise<number> => {
      const settings = await this.settings();
      const budget = settings.timeoutMs;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no decision within ${budget} ms`)), Math.max(1, budget - (Date.now() - started)));
      });
      const run = async (): Promise<number> => {
        const input = parseHook(await readAll(this.context.stdin));
        event = input['hook_event_name'] as string;
        const agent = this.agent ?? (this.context.env.SERVICE_AGENT_ID || undefined);
        const res = await this.withClient((c) =>
          c.request('POST', '/v1/m/governance/pep/decisions', { body: { ...input, ...(agent ? { agent_id: agent } : {}) } }),
        );
        const d = res.body as { decision?: unknown; reason?: unknown; revision?: unknown; decision_id?: unknown };
        if (typeof d !== 'object' || d === null || typeof d.decision !== 'string' || typeof d.reason !== 'string')
          throw new Error('malformed answer from the decision endpoint');
        if (!DECISIONS.has(d.decision)) throw new Error(`unknown decision ${JSON.stringify(d.decision).slice(0, 40)}`);
        const reason =
          `${d.reason} (svc decision ${String(d.decision_id)}, policy ` +
          `revision ${d.revision === null ? 'none' : String(d.revision)})`;
        if (settled) return HOOK_DENY_EXIT;
        settled = true;
        this.context.stdout.write(`${JSON.stringify(hookOutput(event, d.decision as 'allow' | 'deny' | 'ask', reason))}\n`);
        return 0;
      };
      return await Promise.race([run(), deadline]);
    })();
    try {
      return await work;
    } catch (err) {
      if (settled) return HOOK_DENY_EXIT;
      settled = true;
      const e = err as { message?: string; code?: string };
      return this.deny(event, `svc could not decide, so the call is denied: ${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private deny(event: string, reason: string): number {
    this.context.stdout.write(`${JSON.stringify(hookOutput(event, 'deny', reason))}\n`);
    this.context.stderr.write(`${reason}\n`);
    return HOOK_DENY_EXIT;
  }
}

/** The hook JSON, kept to the fields the endpoint takes (the agent may add fields of its own). */
function parseHook(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error('the hook input on stdin is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('the hook input on stdin is not a JSON object');
  const o = v as Record<string, unknown>;
  for (const k of ['hook_event_name', 'session_id', 'tool_name'] as const)
    if (typeof o[k] !== 'string') throw new Error(`the hook input lacks ${k}`);
  const out: Record<string, unknown> = {};
  for (const k of KNOWN) if (o[k] !== undefined) out[k] = o[k];
  if (typeof out['tool_input'] !== 'object' || out['tool_input'] === null || Array.isArray(out['tool_input'])) out['tool_input'] = {};
  return out;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
