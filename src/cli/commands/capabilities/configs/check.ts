import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { fields } from '../../auth/support.js';
import { CONFIGS, configId } from '../support.js';

/** `svc capabilities configs check <id|name>`: resolve every secret reference now, as a launcher would. */
export class CapabilitiesConfigsCheckCommand extends ClientCommand {
  static override paths = [['capabilities', 'configs', 'check']];
  static override usage = BaseCommand.Usage({
    category: 'Capabilities',
    description:
      `Resolve every secret reference of a configuration now, as a launcher would; values are never shown (POST ` +
      `${CONFIGS}/{id}/check); exit 6 when a referenced secret is gone`,
  });

  ref = Option.String({ name: 'config', required: true });

  async execute(): Promise<number> {
    const r = (await this.withClient(async (c) => c.request('POST', `${CONFIGS}/${await configId(c, this.ref)}/check`))).body as {
      id: string;
      revision: number;
      ok: boolean;
      secrets: string[];
    };
    this.emit(r, (x) => fields({ ...x, secrets: x.secrets.join(', ') || '(none)' }));
    return 0;
  }
}
