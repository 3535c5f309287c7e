import { constants as fsc } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand } from '../../client/base-command.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

/**
 * `svc agent managed-settings`: renders Claude Code's managed-settings JSON that installs
 * `svc claude-hook` for PreToolUse and PostToolUse. The agent's own hook timeout is set above the
 * hook client's (`--timeout` + 5 s), so svc's deny always comes first: were the agent to time the
 * hook out itself, it would treat that as a non-blocking error and run the tool. With `--redact`
 * (default) no credential is ever written: the hook reads `--token-file` or `$SERVICE_TOKEN` on the
 * host; `--no-redact` embeds `$SERVICE_TOKEN` of this shell in the settings' `env`.
 */
export class AgentManagedSettingsCommand extends BaseCommand {
  static override paths = [['agent', 'managed-settings']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'Render managed settings that install the svc hook for every tool call (fails closed)',
    details:
      "`--timeout` (seconds, default 5) is the hook client's deadline; `--redact` (default true) keeps credentials out; `--out` " +
      '(default `-`, stdout) writes a file with mode 0600.',
    examples: [
      [
        'Install for a fleet',
        '$0 agent managed-settings --server https://svc.example:8443 --token-file /etc/svc/hook-token --out ' +
          '/etc/claude-code/managed-settings.json',
      ],
    ],
  });

  server = Option.String('--server', {
    description: "Server URL the hook calls (default: $SERVICE_SERVER_URL; else the host's saved context)",
  });
  tokenFile = Option.String('--token-file', { description: 'Token file on the agent host the hook reads (never inlined)' });
  caCert = Option.String('--ca-cert', { description: 'CA certificate path on the agent host' });
  pin = Option.Array('--pin-sha256', { description: 'Server certificate SPKI pin (repeatable)' });
  agent = Option.String('--agent', { description: 'Agent id the hook sends with each decision' });
  timeout = Option.String('--timeout', '5', {
    description: 'Hook client timeout in seconds (default 5)',
    validator: t.isNumber() as never,
  });
  redact = Option.Boolean('--redact', true, { description: 'Keep credentials out of the output (default true)' });
  out = Option.String('--out', '-', { description: 'Output file, or - for stdout (default)' });
  command = Option.String('--command', 'svc', {
    description: 'How the agent host runs svc, words split on spaces (default `svc`; e.g. "node /opt/svc/bin/svc.js")',
  });

  async execute(): Promise<number> {
    const seconds = Number(this.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600)
      throw new CliError(ExitCode.Usage, 'usage', '--timeout takes seconds between 0 and 600');
    const server = this.server ?? (this.context.env.SERVICE_SERVER_URL || undefined);
    const words = this.command.trim().split(/\s+/).filter((w) => w !== '');
    if (words.length === 0) throw new CliError(ExitCode.Usage, 'usage', '--command needs the command that runs svc, e.g. "svc"');
    // The hook's configuration goes into the settings' env, never onto the command line: Claude Code
    // shows the command line to the model whenever the hook reports an error.
    const env: Record<string, string> = { SERVICE_HOOK_TIMEOUT: `${seconds}s` };
    if (server) env['SERVICE_HOOK_SERVER'] = server;
    if (this.tokenFile) env['SERVICE_HOOK_TOKEN_FILE'] = this.tokenFile;
    if (this.caCert) env['SERVICE_HOOK_CA_CERT'] = this.caCert;
    if (this.pin && this.pin.length > 0) env['SERVICE_HOOK_PIN_SHA256'] = this.pin.join(',');
    if (this.agent) env['SERVICE_HOOK_AGENT'] = this.agent;
    const token = this.context.env.SERVICE_TOKEN;
    if (!this.redact && token) env['SERVICE_TOKEN'] = token;
    const hook = { type: 'command', command: hookCommand(words), timeout: Math.ceil(seconds) + 5 };
    const settings: Record<string, unknown> = {
      env,
      hooks: { PreToolUse: [{ matcher: '*', hooks: [hook] }], PostToolUse: [{ matcher: '*', hooks: [hook] }] },
      // Managed hooks only: users and projects cannot add hooks that bypass svc.
      allowManagedHooksOnly: true,
    };
    const text = `${JSON.stringify(settings, null, 2)}\n`;
    if (this.out === '-') this.context.stdout.write(text);
    else {
      const tmp = `${this.out}.${process.pid}.tmp`;
      const fh = await open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.out);
      this.context.stderr.write(`wrote ${this.out}\n`);
    }
    return 0;
  }
}

/** One shell word: left bare when it holds nothing the shell interprets, else single-quoted. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The hook's command line for `sh -c`: the words of `--command`, each quoted, then `claude-hook`.
 * Claude Code runs the tool on any exit but 0 and 2, so every other status — 127 (not found), 126
 * (not executable), 1 (a crash), a signal — becomes 2 with a one-line reason; 0 and 2 pass through.
 */
export function hookCommand(words: string[]): string {
  const run = [...words.map(shellWord), 'claude-hook'].join(' ');
  return `${run} || { s=$?; [ "$s" -eq 2 ] || echo "svc claude-hook could not run (exit $s), so the call is denied" >&2; exit 2; }`;
}
