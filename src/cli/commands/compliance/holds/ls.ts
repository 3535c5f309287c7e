import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import type { Page } from '../../auth/support.js';
import { HOLDS, holdTable, type HoldView } from '../support.js';

/** `svc compliance holds ls`: legal holds of the tenant. */
export class ComplianceHoldsLsCommand extends ClientCommand {
  static override paths = [['compliance', 'holds', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'List legal holds (GET /v1/m/compliance/holds)',
    examples: [['Active ones', '$0 compliance holds ls --status active']],
  });

  status = Option.String('--status', { description: 'active or released' });
  limit = Option.String('--limit', { description: 'Page size (1-1000, default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get(HOLDS, { query: { status: this.status, limit: this.limit, cursor: this.cursor } })))
      .body as Page<HoldView>;
    this.emit(page, (p) => holdTable(p.items) + (p.has_more ? `\nmore: --cursor ${p.cursor}` : ''));
    return 0;
  }
}
