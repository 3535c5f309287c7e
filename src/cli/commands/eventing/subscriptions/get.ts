import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { subscriptionFields, type SubscriptionView, SUBSCRIPTIONS, subscriptionId } from '../support.js';

/** `svc eventing subscriptions get <id>`. */
export class EventingSubscriptionsGetCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'One subscription (GET /v1/m/eventing/subscriptions/{id}); never its secret or credential',
  });
  id = Option.String({ name: 'subscription', required: true });

  async execute(): Promise<number> {
    const sub = (await this.withClient(async (c) => c.get(`${SUBSCRIPTIONS}/${await subscriptionId(c, this.id)}`)))
      .body as SubscriptionView;
    this.emit(sub, subscriptionFields);
    return 0;
  }
}
