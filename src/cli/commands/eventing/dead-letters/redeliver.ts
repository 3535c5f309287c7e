import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { fields, idSegment } from '../../auth/support.js';
import type { DeliveryView } from '../support.js';

/** `svc eventing dead-letters redeliver <id>`. */
export class EventingDeadLettersRedeliverCommand extends ClientCommand {
  static override paths = [['eventing', 'dead-letters', 'redeliver']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Requeue one dead delivery; its attempts start over (POST /v1/m/eventing/dead-letters/{id}/redeliver)',
  });
  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const d = (await this.withClient((c) => c.request('POST', `/v1/m/eventing/dead-letters/${idSegment(this.id)}/redeliver`)))
      .body as DeliveryView;
    this.emit(d, (x) => fields({ ...x }));
    return 0;
  }
}
