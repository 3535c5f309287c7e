import { Option } from 'clipanion';
import { BaseCommand } from '../../../client/base-command.js';
import {
  bodyFrom,
  subscriptionFields,
  SubscriptionFlagsCommand,
  type SubscriptionView,
  SUBSCRIPTIONS,
  subscriptionId,
} from '../support.js';

/** `svc eventing subscriptions update <id>`: edit in place (PUT); the secret stays. */
export class EventingSubscriptionsUpdateCommand extends SubscriptionFlagsCommand {
  static override paths = [['eventing', 'subscriptions', 'update']];

  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description:
      'Edit a subscription in place (PUT /v1/m/eventing/subscriptions/{id}); flags not given stay as they are, the signing secret is ' +
      'never reissued',
    examples: [['Point it at a new receiver', '$0 eventing subscriptions update <id|name> --endpoint https://new.example.com/hook']],
  });

  id = Option.String({ name: 'subscription', required: true });
  enable = Option.Boolean('--enable', { description: 'Enable it again' });

  async execute(): Promise<number> {
    const sub = await this.withClient(async (c) => {
      const path = `${SUBSCRIPTIONS}/${await subscriptionId(c, this.id)}`;
      const cur = (await c.get(path)).body as SubscriptionView;
      const body = { ...bodyFrom(this, cur), version: cur.version, ...(this.enable ? { enabled: true } : {}) };
      return (await c.request('PUT', path, { body })).body as SubscriptionView;
    });
    this.emit(sub, subscriptionFields);
    return 0;
  }
}
