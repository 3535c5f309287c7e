import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { subscriptionFields, type SubscriptionView, SUBSCRIPTIONS, subscriptionId } from '../support.js';

/** `svc eventing subscriptions rotate-secret <id>`: a new signing secret, printed once. */
export class EventingSubscriptionsRotateSecretCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'rotate-secret']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description:
      'Issue a new signing secret (POST …/subscriptions/{id}/rotate-secret), printed once; the old one keeps signing beside it for 24 h',
  });
  id = Option.String({ name: 'subscription', required: true });

  async execute(): Promise<number> {
    const sub = (
      await this.withClient(async (c) => c.request('POST', `${SUBSCRIPTIONS}/${await subscriptionId(c, this.id)}/rotate-secret`))
    ).body as SubscriptionView;
    this.emit(sub, subscriptionFields);
    return 0;
  }
}
