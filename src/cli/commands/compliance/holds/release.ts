import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../../client/base-command.js';
import { idSegment } from '../../auth/support.js';
import { HOLDS, holdFields, pendingText, type HoldView, type Pending } from '../support.js';

/** `svc compliance holds release <id>`: release under dual control (opens an approval, then uses it). */
export class ComplianceHoldsReleaseCommand extends ClientCommand {
  static override paths = [['compliance', 'holds', 'release']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description:
      'Release a legal hold under dual control (POST /v1/m/compliance/holds/{id}/release): without --approval it opens an approval; ' +
      'needs -y when not interactive',
    examples: [
      ['Request', '$0 compliance holds release <id> --reason "settled" -y'],
      ['Then, once approved', '$0 compliance holds release <id> --approval <approval-id> -y'],
    ],
  });

  id = Option.String({ name: 'id', required: true });
  approval = Option.String('--approval', { description: 'the approved approval id' });
  reason = Option.String('--reason');
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `release legal hold ${this.id}`);
    const body = { ...(this.approval ? { approval_id: this.approval } : {}), ...(this.reason ? { reason: this.reason } : {}) };
    const out = (await this.withClient((c) => c.request('POST', `${HOLDS}/${idSegment(this.id)}/release`, { body }))).body as
      HoldView | Pending;
    this.emit(out, (x) => (x.status === 'pending_approval' ? pendingText(x as Pending) : holdFields(x as HoldView)));
    return 0;
  }
}
