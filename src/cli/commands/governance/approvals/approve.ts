import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { APPROVALS, approvalFields, type ApprovalView } from './support.js';

/** `svc governance approvals approve <id>`: record your decision (one per person; not on your own request). */
export class GovernanceApprovalsApproveCommand extends ClientCommand {
  static override paths = [['governance', 'approvals', 'approve']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Approve an approval request (POST /v1/m/governance/approvals/{id}/decisions)',
    examples: [['Approve with a reason', '$0 governance approvals approve <id> --reason "checked the plan"']],
  });

  id = Option.String({ name: 'id', required: true });
  reason = Option.String('--reason', { required: true, description: 'Why (recorded in the ledger)' });

  async execute(): Promise<number> {
    const res = (
      await this.withClient((c) =>
        c.request('POST', `${APPROVALS}/${idSegment(this.id)}/decisions`, { body: { decision: 'approve', reason: this.reason } }),
      )
    ).body as { approval: ApprovalView };
    this.emit(res.approval, approvalFields);
    return 0;
  }
}
