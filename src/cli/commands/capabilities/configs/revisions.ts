import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { table } from '../../auth/support.js';
import { CONFIGS, configId } from '../support.js';

type RevisionView = {
  config_id: string;
  revision: number;
  change: string;
  config: { name: string; enabled: boolean };
  actor: string;
  created_at: string;
};

/** `svc capabilities configs revisions <id|name>`. */
export class CapabilitiesConfigsRevisionsCommand extends ClientCommand {
  static override paths = [['capabilities', 'configs', 'revisions']];
  static override usage = BaseCommand.Usage({
    category: 'Capabilities',
    description:
      'Every revision of a configuration, newest first (GET /v1/m/capabilities/configs/{id}/revisions); -o json has each whole object',
  });

  ref = Option.String({ name: 'config', required: true });

  async execute(): Promise<number> {
    const r = (await this.withClient(async (cl) => cl.get(`${CONFIGS}/${await configId(cl, this.ref)}/revisions`))).body as {
      items: RevisionView[];
      has_more: boolean;
    };
    this.emit(r, (v) =>
      table(v.items, [
        ['revision', (x) => x.revision],
        ['change', (x) => x.change],
        ['name', (x) => x.config.name],
        ['enabled', (x) => x.config.enabled],
        ['by', (x) => x.actor],
        ['at', (x) => x.created_at],
      ]),
    );
    return 0;
  }
}
