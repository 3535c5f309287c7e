import { Option } from 'clipanion';
import { BaseCommand, yesOption } from '../../../client/base-command.js';
import { CONFIGS, ConfigBodyCommand, configFields, configId, type ConfigView } from '../support.js';

/** `svc capabilities configs replace <id|name>`: the whole object, a new revision. */
export class CapabilitiesConfigsReplaceCommand extends ConfigBodyCommand {
  static override paths = [['capabilities', 'configs', 'replace']];
  static override usage = BaseCommand.Usage({
    category: 'Capabilities',
    description:
      'Replace a whole configuration (PUT /v1/m/capabilities/configs/{id}): every field not given resets to its default; a new ' +
      'revision; needs -y when not interactive',
    examples: [['Replace from a file', '$0 capabilities configs replace github --file github.json -y']],
  });

  ref = Option.String({ name: 'config', required: true });
  yes = yesOption();

  async execute(): Promise<number> {
    const body = await this.body();
    await this.requireYes(this.yes, `replace configuration ${this.ref} (fields not given reset to their defaults)`);
    const c = (await this.withClient(async (cl) => cl.request('PUT', `${CONFIGS}/${await configId(cl, this.ref)}`, { body })))
      .body as ConfigView;
    this.emit(c, configFields);
    return 0;
  }
}
