import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import type { Page } from '../../auth/support.js';
import { APPROVALS, approvalTable, type ApprovalView } from './support.js';

/** `svc governance approvals ls`: approval requests of the tenant. */
export class GovernanceApprovalsLsCommand extends ClientCommand {
  static override paths = [['governance', 'approvals', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'List approval requests (GET /v1/m/governance/approvals)',
    examples: [['Pending ones', '$0 governance approvals ls --status pending']],
  });

  status = Option.String('--status', { description: 'pending, approved, rejected, cancelled, consumed or expired' });
  action = Option.String('--action', { description: 'Only this action' });
  limit = Option.String('--limit', { description: 'Page size (1-1000, default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (
      await this.withClient((c) =>
        c.get(APPROVALS, { query: { status: this.status, action: this.action, limit: this.limit, cursor: this.cursor } }),
      )
    ).body as Page<ApprovalView>;
    this.emit(page, (p) => approvalTable(p.items) + (p.has_more ? `\nmore: --cursor ${p.cursor}` : ''));
    return 0;
  }
}
