import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';

/** `svc secrets rm NAME`: DELETE /v1/console/secrets?name=NAME. */
export class SecretsRmCommand extends ClientCommand {
  static override paths = [['secrets', 'rm']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description: 'Delete a sealed secret; every configuration that references it fails closed from then on',
    details: 'Needs `-y` when stdin is not a terminal.',
    examples: [['Delete', '$0 secrets rm okta-client -y']],
  });

  name = Option.String({ name: 'name' });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `delete secret ${this.name} (what references it fails closed)`);
    await this.withClient((c) => c.request('DELETE', '/v1/console/secrets', { query: { name: this.name } }));
    this.emit({ name: this.name, deleted: true }, (o) => `secret ${o.name} deleted`);
    return 0;
  }
}
