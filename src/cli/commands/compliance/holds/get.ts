import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { HOLDS, holdFields, type HoldView } from '../support.js';

/** `svc compliance holds get <id>`: one legal hold. */
export class ComplianceHoldsGetCommand extends ClientCommand {
  static override paths = [['compliance', 'holds', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'Show one legal hold (GET /v1/m/compliance/holds/{id})',
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const h = (await this.withClient((c) => c.get(`${HOLDS}/${idSegment(this.id)}`))).body as HoldView;
    this.emit(h, holdFields);
    return 0;
  }
}
