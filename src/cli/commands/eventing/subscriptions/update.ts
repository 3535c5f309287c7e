import { Option } from 'clipanion';
import { BaseCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { bodyFrom, subscriptionFields, SubscriptionFlagsCommand, type SubscriptionView } from '../support.js';

/** `svc eventing subscriptions update <id>`: edit in place (PUT); the secret stays. */
export class EventingSubscriptionsUpdateCommand extends SubscriptionFlagsCommand {
  static override paths = [['eventing', 'subscriptions', 'update']];

  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description:
      'Edit a subscription in place (PUT /v1/m/eventing/subscriptions/{id}); flags not given stay as they are, the signing secret is ' +
      'never reissued',
    examples: [['Point it at a new receiver', '$0 eventing subscriptions update <id> --endpoint https://new.example.com/hook']],
  });

  id = Option.String({ name: 'id', required: true });
  enable = Option.Boolean('--enable', { description: 'Enable it again' });

  async execute(): Promise<number> {
    const path = `/v1/m/eventing/subscriptions/${idSegment(this.id)}`;
    const sub = await this.withClient(async (c) => {
      const cur = (await c.get(path)).body as SubscriptionView;
      const body = { ...bodyFrom(this, cur), version: cur.version, ...(this.enable ? { enabled: true } : {}) };
      return (await c.request('PUT', path, { body })).body as SubscriptionView;
    });
    this.emit(sub, subscriptionFields);
    return 0;
  }
}
