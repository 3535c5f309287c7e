import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import type { Page } from '../../auth/support.js';
import { deliveryTable, type DeliveryView } from '../support.js';

/** `svc eventing deliveries ls`. */
export class EventingDeliveriesLsCommand extends ClientCommand {
  static override paths = [['eventing', 'deliveries', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Deliveries by subscription and status: queued, delivering, delivered, failed, dead (GET /v1/m/eventing/deliveries)',
  });
  subscription = Option.String('--subscription', { description: 'Only this subscription id' });
  status = Option.String('--status', { description: 'Only this status' });
  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (
      await this.withClient((c) =>
        c.get('/v1/m/eventing/deliveries', {
          query: { subscription_id: this.subscription, status: this.status, limit: this.limit, cursor: this.cursor },
        }),
      )
    ).body as Page<DeliveryView>;
    this.emit(page, (p) => `${deliveryTable(p.items)}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`);
    return 0;
  }
}
