import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { fields, idSegment } from '../../auth/support.js';
import type { DeliveryView } from '../support.js';

/** `svc eventing subscriptions test <id>`: one signed test delivery now. */
export class EventingSubscriptionsTestCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'test']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Send one signed test delivery (`subscription.tested`) now and show how it went (POST …/subscriptions/{id}/test)',
  });
  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const res = (await this.withClient((c) => c.request('POST', `/v1/m/eventing/subscriptions/${idSegment(this.id)}/test`))).body as {
      delivery: DeliveryView;
    };
    this.emit(res, (r) => fields({ ...r.delivery }));
    return res.delivery.status === 'delivered' ? 0 : 1;
  }
}
