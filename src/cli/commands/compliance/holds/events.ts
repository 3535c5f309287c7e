import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { custodyTable, HOLDS, type Custody } from '../support.js';

/** `svc compliance holds events <id>`: the custody chain of a hold, each step with its ledger record. */
export class ComplianceHoldsEventsCommand extends ClientCommand {
  static override paths = [['compliance', 'holds', 'events']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'The custody chain of a legal hold (GET /v1/m/compliance/holds/{id}/events)',
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const r = (await this.withClient((c) => c.get(`${HOLDS}/${idSegment(this.id)}/events`))).body as { items: Custody[] };
    this.emit(r, (x) => custodyTable(x.items));
    return 0;
  }
}
