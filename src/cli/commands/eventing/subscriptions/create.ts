import { BaseCommand } from '../../../client/base-command.js';
import { CliUsageError } from '../../../client/errors.js';
import { bodyFrom, subscriptionFields, SubscriptionFlagsCommand, type SubscriptionView } from '../support.js';

/** `svc eventing subscriptions create`: a webhook subscription; its signing secret is printed once. */
export class EventingSubscriptionsCreateCommand extends SubscriptionFlagsCommand {
  static override paths = [['eventing', 'subscriptions', 'create']];

  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Create a webhook subscription (POST /v1/m/eventing/subscriptions); the signing secret is printed once',
    details:
      'With `-o json` the secret is the `secret` field; in text form it is the last line. Receivers verify deliveries with any ' +
      'Standard Webhooks library (docs/eventing.md).',
    examples: [
      [
        'Agent events as CloudEvents JSON',
        '$0 eventing subscriptions create --name soar --endpoint https://soar.example.com/hooks/svc --event-type agent.created ' +
          '--event-type agent.deleted --sink-format json',
      ],
    ],
  });

  async execute(): Promise<number> {
    if (!this.name || !this.endpoint || !this.eventType?.length)
      throw new CliUsageError('--name, --endpoint and at least one --event-type are required');
    const sub = (await this.withClient((c) => c.request('POST', '/v1/m/eventing/subscriptions', { body: bodyFrom(this) })))
      .body as SubscriptionView;
    this.emit(sub, subscriptionFields);
    return 0;
  }
}
