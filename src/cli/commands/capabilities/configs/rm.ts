import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../../client/base-command.js';
import { CONFIGS, configId } from '../support.js';

/** `svc capabilities configs rm <id|name>`. */
export class CapabilitiesConfigsRmCommand extends ClientCommand {
  static override paths = [['capabilities', 'configs', 'rm']];
  static override usage = BaseCommand.Usage({
    category: 'Capabilities',
    description: 'Delete a configuration (DELETE /v1/m/capabilities/configs/{id}; its revisions stay); needs -y when not interactive',
  });

  ref = Option.String({ name: 'config', required: true });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `delete configuration ${this.ref}`);
    const id = await this.withClient(async (cl) => {
      const found = await configId(cl, this.ref);
      await cl.request('DELETE', `${CONFIGS}/${found}`);
      return found;
    });
    this.emit({ deleted: id }, (d) => `deleted configuration ${d.deleted}`);
    return 0;
  }
}
