import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { custodyTable, ERASURE, type Custody } from '../support.js';

/** `svc compliance erasure events <id>`: the custody chain of an erasure request, each step with its ledger record. */
export class ComplianceErasureEventsCommand extends ClientCommand {
  static override paths = [['compliance', 'erasure', 'events']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: `The custody chain of an erasure ` + `request (GET ${ERASURE}/{id}/events)`,
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const r = (await this.withClient((c) => c.get(`${ERASURE}/${idSegment(this.id)}/events`))).body as { items: Custody[] };
    this.emit(r, (x) => custodyTable(x.items));
    return 0;
  }
}
