/**
 * `svc claude-hook` in the command tree: help, reference and in-process runs. The hook itself is
 * src/cli/hook/claude-hook.ts, which `bin/svc.js` loads without this tree (issue 47): exit 0 when
 * the server decided in time, 2 (a deny) on every failure; `--timeout` (default 5 s) bounds it all.
 */
import { BaseCommand, ClientCommand } from '../client/base-command.js';
import { Option } from 'clipanion';

export { HOOK_DEFAULT_TIMEOUT_MS, HOOK_DENY_EXIT, hookOutput } from '../hook/claude-hook.js';
import { HOOK_DEFAULT_TIMEOUT_MS } from '../hook/claude-hook.js';

export class ClaudeHookCommand extends ClientCommand {
  static override paths = [['claude-hook']];

  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Hook client for Claude Code: ask svc to decide a tool call (reads hook JSON on stdin); denies on any failure',
    details:
      'Prints the hook-output JSON. Exit 0: the server decided (allow, ask or deny). Exit 2: the client could not get a decision ' +
      '(unreachable, TLS, timeout, non-2xx, malformed answer, unknown decision, malformed input) and denied. `--timeout` bounds ' +
      'everything (default 5s); an answer over 64 KiB is a deny. Configuration: flags, then $SERVICE_HOOK_SERVER, ' +
      '$SERVICE_HOOK_TOKEN_FILE, $SERVICE_HOOK_CA_CERT, $SERVICE_HOOK_PIN_SHA256, $SERVICE_HOOK_AGENT, $SERVICE_HOOK_TIMEOUT, ' +
      'then $SERVICE_SERVER_URL/$SERVICE_TOKEN, then the saved context.',
    examples: [
      [
        'By hand, as the agent runs it (svc agent managed-settings writes these variables into the settings env)',
        'SERVICE_HOOK_SERVER=https://svc.example:8443 SERVICE_HOOK_TOKEN_FILE=/etc/svc/hook-token svc claude-hook < hook.json',
      ],
    ],
  });

  agent = Option.String('--agent', {
    description: 'Agent id sent with each decision (default: $SERVICE_AGENT_ID; else the credential identifies the agent)',
  });

  protected override defaultTimeoutMs = HOOK_DEFAULT_TIMEOUT_MS;

  override async validateAndExecute(): Promise<number> {
    return this.execute();
  }

  /**
   * `bin/svc.js` runs the lean module directly (src/cli/hook/); this class only lists the command in
   * the help and the reference, and hands an in-process call the same code with the flags rebuilt.
   */
  async execute(): Promise<number> {
    const argv: string[] = [];
    const put = (flag: string, value: string | undefined): void => {
      if (value !== undefined) argv.push(flag, value);
    };
    put('--server', this.server);
    put('--tenant', this.tenant);
    put('--token', this.token);
    put('--token-file', this.tokenFile);
    put('--ca-cert', this.caCert);
    for (const p of this.pinSha256 ?? []) put('--pin-sha256', p);
    if (this.insecure) argv.push('--insecure');
    if (this.allowCleartext) argv.push('--allow-cleartext');
    put('--timeout', this.timeout);
    put('--context', this.contextName);
    put('--agent', this.agent);
    const { runHook } = await import('../hook/claude-hook.js');
    return await new Promise<number>((done) => {
      const { env, stdin, stdout, stderr } = this.context;
      void runHook(argv, { env, stdin, stdout, stderr, exit: done });
    });
  }
}

