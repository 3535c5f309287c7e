import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { ERASURE, erasureFields, type ErasureView } from '../support.js';

/** `svc compliance erasure register`: record an erasure request (destroys nothing). */
export class ComplianceErasureRegisterCommand extends ClientCommand {
  static override paths = [['compliance', 'erasure', 'register']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance', description: 'Register an erasure request (POST /v1/m/compliance/erasure); registering destroys nothing',
    examples: [['A user', '$0 compliance erasure register --case DSR-17 --subject-ref <user-id> --alias old@example.com']],
  });

  caseRef = Option.String('--case', { required: true, description: 'the case reference' });
  subjectKind = Option.String('--subject-kind', { description: 'default user' });
  subjectRef = Option.String('--subject-ref', {
    required: true,
    description: 'the subject: for a user its id or e-mail (stored as the id)',
  });
  aliases = Option.Array('--alias', { description: 'another reference of the same subject (repeatable)' });
  dataClasses = Option.Array('--data-class', { description: 'limit to this data class (repeatable)' });
  reason = Option.String('--reason');

  async execute(): Promise<number> {
    const body = {
      case_ref: this.caseRef,
      subject_kind: this.subjectKind,
      subject_ref: this.subjectRef,
      aliases: this.aliases,
      data_classes: this.dataClasses,
      reason: this.reason,
    };
    const e = (
      await this.withClient((c) =>
        c.request('POST', ERASURE, { body: Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) }),
      )
    ).body as ErasureView;
    this.emit(e, erasureFields);
    return 0;
  }
}
