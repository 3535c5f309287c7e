import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment, table } from '../../auth/support.js';
import { HOLDS } from '../support.js';

type Custody = { event: string; people: string[]; approval_id: string | null; ledger_seq: number; ledger_hash: string; created_at: string };

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
    this.emit(r, (x) =>
      table(x.items, [
        ['event', (e) => e.event],
        ['seq', (e) => e.ledger_seq],
        ['hash', (e) => e.ledger_hash.slice(0, 16)],
        ['people', (e) => e.people.join(',')],
        ['at', (e) => e.created_at],
      ]),
    );
    return 0;
  }
}
