import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { subscriptionFields, type SubscriptionView } from '../support.js';

/** `svc eventing subscriptions get <id>`. */
export class EventingSubscriptionsGetCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'One subscription (GET /v1/m/eventing/subscriptions/{id}); never its secret or credential',
  });
  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const sub = (await this.withClient((c) => c.get(`/v1/m/eventing/subscriptions/${idSegment(this.id)}`))).body as SubscriptionView;
    this.emit(sub, subscriptionFields);
    return 0;
  }
}
