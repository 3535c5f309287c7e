import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { fields, idSegment } from '../../auth/support.js';
import { ERASURE } from '../support.js';

/** `svc compliance erasure receipt <id>`: the sealed receipt of a completed erasure. */
export class ComplianceErasureReceiptCommand extends ClientCommand {
  static override paths = [['compliance', 'erasure', 'receipt']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'The receipt of a completed erasure (GET /v1/m/compliance/erasure/{id}/receipt)',
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const r = (await this.withClient((c) => c.get(`${ERASURE}/${idSegment(this.id)}/receipt`))).body as Record<string, unknown>;
    this.emit(r, (x) =>
      fields(Object.fromEntries(Object.entries(x).map(([k, v]) => [k, typeof v === 'object' && v !== null ? JSON.stringify(v) : v]))),
    );
    return 0;
  }
}
