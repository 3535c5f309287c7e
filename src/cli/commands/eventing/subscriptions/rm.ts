import { Option } from 'clipanion';
import { SUBSCRIPTIONS, subscriptionId } from '../support.js';
import { BaseCommand, ClientCommand, yesOption } from '../../../client/base-command.js';

/** `svc eventing subscriptions rm <id>`: delete a subscription and its deliveries. */
export class EventingSubscriptionsRmCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'rm']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description:
      'Delete a subscription and its deliveries (DELETE /v1/m/eventing/subscriptions/{id}); needs -y when stdin is not a terminal',
  });
  id = Option.String({ name: 'subscription', required: true });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `delete subscription ${this.id} and its deliveries`);
    await this.withClient(async (c) => c.request('DELETE', `${SUBSCRIPTIONS}/${await subscriptionId(c, this.id)}`));
    this.emit({ deleted: this.id }, (d) => `deleted subscription ${d.deleted}`);
    return 0;
  }
}
