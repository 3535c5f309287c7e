import { readFile } from 'node:fs/promises';
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';

interface LicenseView {
  status: string;
  holder: string | null;
  limits: Record<string, number>;
  expires_at: string | null;
  reason: string | null;
  governs: string;
}

/** `svc support license [--install FILE | --remove]`: GET, POST or DELETE /v1/console/license. */
export class SupportLicenseCommand extends ClientCommand {
  static override paths = [['support', 'license']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description: 'Show, install or remove the offline license (holder, limits, expiry); it never gates the audit ledger or exports',
    examples: [
      ['Show', '$0 support license'],
      ['Install', '$0 support license --install acme.license.json'],
      ['Remove', '$0 support license --remove'],
    ],
  });

  install = Option.String('--install', { description: 'License file to verify and install' });
  remove = Option.Boolean('--remove', false, { description: 'Remove the installed license' });

  async execute(): Promise<number> {
    if (this.install !== undefined && this.remove) throw new CliUsageError('--install and --remove exclude each other');
    if (this.remove) {
      await this.withClient((c) => c.request('DELETE', '/v1/console/license'));
      this.emit({ removed: true }, () => 'license removed');
      return 0;
    }
    let text: string | undefined;
    if (this.install !== undefined) {
      try {
        text = await readFile(this.install, 'utf8');
      } catch (err) {
        throw new CliUsageError(`cannot read the license file ${this.install}: ${(err as Error).message}`);
      }
    }
    const body = (
      await this.withClient((c) =>
        text === undefined ? c.get('/v1/console/license') : c.request('POST', '/v1/console/license', { body: { license: text } }),
      )
    ).body as LicenseView;
    this.emit(body, (v) =>
      v.status === 'none'
        ? 'no license installed'
        : `license ${v.status}: ${v.holder ?? '?'}, expires ${v.expires_at ?? '?'}; limits ${
            Object.entries(v.limits)
              .map(([k, n]) => `${k}=${n}`)
              .join(', ') || 'none'
          }${v.reason ? ` (${v.reason})` : ''}`,
    );
    return 0;
  }
}
