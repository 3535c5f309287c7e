import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { HOLDS } from '../support.js';

/** `svc compliance holds check`: is this subject or data class held? */
export class ComplianceHoldsCheckCommand extends ClientCommand {
  static override paths = [['compliance', 'holds', 'check']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'Is a subject or data class under an active legal hold? (GET /v1/m/compliance/holds/check)',
    examples: [['An agent', '$0 compliance holds check --subject-kind agent --subject-ref <id>']],
  });

  subjectKind = Option.String('--subject-kind');
  subjectRef = Option.String('--subject-ref', {
    description: 'the subject, in any form `holds place` takes (exit 4 when it names nothing)',
  });
  dataClass = Option.String('--data-class');

  async execute(): Promise<number> {
    const r = (
      await this.withClient((c) =>
        c.get(`${HOLDS}/check`, { query: { subject_kind: this.subjectKind, subject_ref: this.subjectRef, data_class: this.dataClass } }),
      )
    ).body as { held: boolean; holds: string[] };
    this.emit(r, (x) => (x.held ? `held by ${x.holds.join(', ')}` : 'not held'));
    return 0;
  }
}
