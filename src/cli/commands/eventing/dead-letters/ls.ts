import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import type { Page } from '../../auth/support.js';
import { deliveryTable, type DeliveryView } from '../support.js';

/** `svc eventing dead-letters ls`. */
export class EventingDeadLettersLsCommand extends ClientCommand {
  static override paths = [['eventing', 'dead-letters', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Deliveries that ran out of attempts (GET /v1/m/eventing/dead-letters)',
  });
  subscription = Option.String('--subscription', { description: 'Only this subscription id' });
  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (
      await this.withClient((c) =>
        c.get('/v1/m/eventing/dead-letters', { query: { subscription_id: this.subscription, limit: this.limit, cursor: this.cursor } }),
      )
    ).body as Page<DeliveryView>;
    this.emit(page, (p) => `${deliveryTable(p.items)}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`);
    return 0;
  }
}
