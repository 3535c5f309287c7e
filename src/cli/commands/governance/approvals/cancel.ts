import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { APPROVALS, approvalFields, type ApprovalView } from './support.js';

/** `svc governance approvals cancel <id>`: withdraw a pending or unused approval. */
export class GovernanceApprovalsCancelCommand extends ClientCommand {
  static override paths = [['governance', 'approvals', 'cancel']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Cancel an approval request (POST /v1/m/governance/approvals/{id}/cancel); needs -y when not interactive',
  });

  id = Option.String({ name: 'id', required: true });
  reason = Option.String('--reason', { description: 'Why' });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `cancel approval ${this.id}`);
    const a = (
      await this.withClient((c) =>
        c.request('POST', `${APPROVALS}/${idSegment(this.id)}/cancel`, { body: this.reason ? { reason: this.reason } : {} }),
      )
    ).body as ApprovalView;
    this.emit(a, approvalFields);
    return 0;
  }
}
