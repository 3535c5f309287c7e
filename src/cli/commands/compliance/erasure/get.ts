import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { ERASURE, erasureFields, type ErasureView } from '../support.js';

/** `svc compliance erasure get <id>`: one erasure request. */
export class ComplianceErasureGetCommand extends ClientCommand {
  static override paths = [['compliance', 'erasure', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'Show one erasure request (GET /v1/m/compliance/erasure/{id})',
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const e = (await this.withClient((c) => c.get(`${ERASURE}/${idSegment(this.id)}`))).body as ErasureView;
    this.emit(e, erasureFields);
    return 0;
  }
}
