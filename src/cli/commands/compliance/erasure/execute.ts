import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { ERASURE, erasureFields, pendingText, type ErasureView, type Pending } from '../support.js';

/** `svc compliance erasure execute <id>`: irreversible, under dual control and refused under a legal hold. */
export class ComplianceErasureExecuteCommand extends ClientCommand {
  static override paths = [['compliance', 'erasure', 'execute']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description:
      'Execute an erasure request under dual control (POST /v1/m/compliance/erasure/{id}/execute); irreversible; needs -y when not ' +
      'interactive',
    examples: [
      ['Request', '$0 compliance erasure execute <id> -y'],
      ['Then, once approved', '$0 compliance erasure execute <id> --approval <approval-id> -y'],
    ],
  });

  id = Option.String({ name: 'id', required: true });
  approval = Option.String('--approval', { description: 'the approved approval id' });
  reason = Option.String('--reason');
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `execute erasure request ${this.id} (irreversible)`);
    const body = { ...(this.approval ? { approval_id: this.approval } : {}), ...(this.reason ? { reason: this.reason } : {}) };
    const out = (await this.withClient((c) => c.request('POST', `${ERASURE}/${idSegment(this.id)}/execute`, { body }))).body as
      ErasureView | Pending;
    this.emit(out, (x) => (x.status === 'pending_approval' ? pendingText(x as Pending) : erasureFields(x as ErasureView)));
    return 0;
  }
}
