import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { ExitCode } from '../../client/exit-codes.js';

interface UpdateAnswer {
  status: 'unknown' | 'current' | 'update_available';
  running_version: string;
  latest_version: string | null;
  url: string | null;
  reason: string | null;
}

/** `svc support update-check`: POST /v1/console/update-check; exit 8 when the answer is unknown. */
export class SupportUpdateCheckCommand extends ClientCommand {
  static override paths = [['support', 'update-check']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description: 'Compare the running version with the signed release manifest the server is configured with',
    details:
      'Exit 0 when current or an update is available (printed), 8 when no verdict is possible (no manifest URL configured, or the ' +
      'manifest is unreachable or does not verify).',
    examples: [['Check', '$0 support update-check']],
  });

  protected override defaultTimeoutMs = 30_000;

  async execute(): Promise<number> {
    const body = (await this.withClient((c) => c.request('POST', '/v1/console/update-check'))).body as UpdateAnswer;
    this.emit(body, (v) =>
      v.status === 'unknown'
        ? `update status unknown (running ${v.running_version}): ${v.reason ?? ''}`
        : v.status === 'current'
          ? `svc ${v.running_version} is current (latest ${v.latest_version})`
          : `svc ${v.latest_version} is available (running ${v.running_version})${v.url ? `: ${v.url}` : ''}`,
    );
    return body.status === 'unknown' ? ExitCode.Indeterminate : ExitCode.OK;
  }
}
