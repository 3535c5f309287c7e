import { Option } from 'clipanion';
import { SUBSCRIPTIONS, subscriptionId } from '../support.js';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { fields } from '../../auth/support.js';
import type { DeliveryView } from '../support.js';

/** `svc eventing subscriptions test <id>`: one signed test delivery now. */
export class EventingSubscriptionsTestCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'test']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Send one signed test delivery (`subscription.tested`) now and show how it went (POST …/subscriptions/{id}/test)',
  });
  id = Option.String({ name: 'subscription', required: true });

  async execute(): Promise<number> {
    const res = (await this.withClient(async (c) => c.request('POST', `${SUBSCRIPTIONS}/${await subscriptionId(c, this.id)}/test`)))
      .body as { delivery: DeliveryView };
    this.emit(res, (r) => fields({ ...r.delivery }));
    return res.delivery.status === 'delivered' ? 0 : 1;
  }
}
