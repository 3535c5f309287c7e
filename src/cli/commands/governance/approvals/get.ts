import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { APPROVALS, approvalFields, type ApprovalView } from './support.js';

/** `svc governance approvals get <id>`: one approval request. */
export class GovernanceApprovalsGetCommand extends ClientCommand {
  static override paths = [['governance', 'approvals', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Show one approval request (GET /v1/m/governance/approvals/{id})',
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const a = (await this.withClient((c) => c.get(`${APPROVALS}/${idSegment(this.id)}`))).body as ApprovalView;
    this.emit(a, approvalFields);
    return 0;
  }
}
