import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import type { Page } from '../../auth/support.js';
import { ERASURE, erasureTable, type ErasureView } from '../support.js';

/** `svc compliance erasure ls`: erasure requests of the tenant. */
export class ComplianceErasureLsCommand extends ClientCommand {
  static override paths = [['compliance', 'erasure', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'List erasure requests (GET /v1/m/compliance/erasure)',
  });

  status = Option.String('--status', { description: 'received, pending_approval or completed' });
  limit = Option.String('--limit', { description: 'Page size (1-1000, default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get(ERASURE, { query: { status: this.status, limit: this.limit, cursor: this.cursor } })))
      .body as Page<ErasureView>;
    this.emit(page, (p) => erasureTable(p.items) + (p.has_more ? `\nmore: --cursor ${p.cursor}` : ''));
    return 0;
  }
}
