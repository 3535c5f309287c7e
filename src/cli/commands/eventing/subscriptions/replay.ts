import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { CliUsageError } from '../../../client/errors.js';
import { fields } from '../../auth/support.js';
import { SUBSCRIPTIONS, subscriptionId } from '../support.js';

/** `svc eventing subscriptions replay <id|name> --from-seq N [--to-seq M]`: queue a range of the log again. */
export class EventingSubscriptionsReplayCommand extends ClientCommand {
  static override paths = [['eventing', 'subscriptions', 'replay']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description:
      "Queue the subscription's events of a sequence range again, with their original ids (POST …/subscriptions/{id}/replay; at most " +
      '10,000 per call, `truncated` says when more remain)',
    examples: [['Send events 120-180 again', '$0 eventing subscriptions replay siem-hook --from-seq 120 --to-seq 180']],
  });
  id = Option.String({ name: 'subscription', required: true });
  from = Option.String('--from-seq', { required: true, description: 'First sequence to queue again' });
  to = Option.String('--to-seq', { description: "Last sequence (default: the subscription's cursor)" });

  async execute(): Promise<number> {
    const seq = (flag: string, v: string): number => {
      if (!/^[1-9][0-9]{0,15}$/.test(v)) throw new CliUsageError(`${flag} must be a positive integer, got ${JSON.stringify(v)}`);
      return Number(v);
    };
    const body = { from_seq: seq('--from-seq', this.from), ...(this.to !== undefined ? { to_seq: seq('--to-seq', this.to) } : {}) };
    const out = (
      await this.withClient(async (c) => c.request('POST', `${SUBSCRIPTIONS}/${await subscriptionId(c, this.id)}/replay`, { body }))
    ).body as Record<string, unknown>;
    this.emit(out, (o) => fields(o));
    return 0;
  }
}
