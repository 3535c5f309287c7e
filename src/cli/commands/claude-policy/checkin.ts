import { hostname } from 'node:os';
import { readFile } from 'node:fs/promises';
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { ExitCode } from '../../client/exit-codes.js';
import { fields } from '../auth/support.js';
import { CP, surfaceOption } from './support.js';

type CheckinView = {
  host: string;
  surface: string;
  sha256: string;
  verified: boolean;
  revision: number | null;
  published_revision: number | null;
  current: boolean;
  reason: string;
  checked_in_at: string;
};

/** `svc claude-policy checkin --file <path>`: report what this host holds; exit 7 unless it verifies and is the published revision. */
export class ClaudePolicyCheckinCommand extends ClientCommand {
  static override paths = [['claude-policy', 'checkin']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      'Report the managed settings file this host holds; exit 7 when its bytes do not verify as a signed revision (changed, or not ' +
      'from this server) or are not the published revision',
    examples: [
      [
        'From cron on each host',
        '$0 claude-policy checkin --file /etc/claude-code/managed-settings.json --sig /etc/claude-code/managed-settings.json.sig',
      ],
    ],
  });

  file = Option.String('--file', { required: true, description: 'The installed file (its exact bytes are sent)' });
  sig = Option.String('--sig', { description: 'The raw signature installed beside it (from artifact --sig-out); must verify too' });
  host = Option.String('--host', { description: "The host name to report (default: this machine's)" });
  surface = surfaceOption();

  async execute(): Promise<number> {
    const bytes = await readFile(this.file);
    const signature = this.sig ? (await readFile(this.sig)).toString('base64') : undefined;
    const body = {
      host: this.host ?? hostname(),
      surface: this.surface,
      content_b64: bytes.toString('base64'),
      ...(signature ? { signature } : {}),
    };
    const r = (await this.withClient((c) => c.request('POST', `${CP}/checkins`, { body }))).body as CheckinView;
    this.emit(r, (v) =>
      fields({
        host: v.host,
        surface: v.surface,
        verified: v.verified,
        current: v.current,
        revision: v.revision ?? '(none)',
        published_revision: v.published_revision ?? '(none)',
        sha256: v.sha256,
        reason: v.reason,
      }),
    );
    return r.verified && r.current ? 0 : ExitCode.Degraded;
  }
}
