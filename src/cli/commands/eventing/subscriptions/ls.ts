import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import type { Page } from '../../auth/support.js';
import { subscriptionTable, type SubscriptionView } from '../support.js';

/** `svc eventing subscriptions ls`. */
export class EventingSubscriptionsLsCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'List webhook subscriptions (GET /v1/m/eventing/subscriptions)',
  });
  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (
      await this.withClient((c) => c.get('/v1/m/eventing/subscriptions', { query: { limit: this.limit, cursor: this.cursor } }))
    ).body as Page<SubscriptionView>;
    this.emit(page, (p) => `${subscriptionTable(p.items)}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`);
    return 0;
  }
}
