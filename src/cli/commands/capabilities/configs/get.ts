import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { CONFIGS, configFields, configId, type ConfigView } from '../support.js';

/** `svc capabilities configs get <id|name>`. */
export class CapabilitiesConfigsGetCommand extends ClientCommand {
  static override paths = [['capabilities', 'configs', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Capabilities',
    description: 'Show one configuration by id or name (GET /v1/m/capabilities/configs/{id}); secrets appear only as references',
  });

  ref = Option.String({ name: 'config', required: true });

  async execute(): Promise<number> {
    const c = (await this.withClient(async (cl) => cl.get(`${CONFIGS}/${await configId(cl, this.ref)}`))).body as ConfigView;
    this.emit(c, configFields);
    return 0;
  }
}
