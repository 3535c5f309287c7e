import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { HOLDS, holdFields, type HoldView } from '../support.js';

/** `svc compliance holds place`: place a legal hold (active at once). */
export class ComplianceHoldsPlaceCommand extends ClientCommand {
  static override paths = [['compliance', 'holds', 'place']];
  static override usage = BaseCommand.Usage({
    category: 'Compliance',
    description: 'Place a legal hold (POST /v1/m/compliance/holds); it takes effect at once',
    examples: [
      [
        'Hold one agent',
        '$0 compliance holds place --subject-kind agent --subject-ref payments-copilot --matter "Acme v. Example" --reason "litigation"',
      ],
    ],
  });

  scope = Option.String('--scope', { description: 'subject (default), data_class or tenant' });
  subjectKind = Option.String('--subject-kind', { description: 'agent, user, workspace… (scope subject)' });
  subjectRef = Option.String('--subject-ref', {
    description:
      'the held subject (scope subject); for an agent, user or workspace: its id, name, external id, e-mail or root path (stored by id)',
  });
  dataClass = Option.String('--data-class', { description: 'data class id (scope data_class)' });
  matter = Option.String('--matter', { required: true, description: 'the legal matter' });
  reason = Option.String('--reason', { required: true, description: 'why (recorded in the ledger)' });
  title = Option.String('--title');
  onBehalfOf = Option.String('--on-behalf-of');

  async execute(): Promise<number> {
    const body = {
      scope: this.scope,
      subject_kind: this.subjectKind,
      subject_ref: this.subjectRef,
      data_class: this.dataClass,
      matter: this.matter,
      reason: this.reason,
      title: this.title,
      on_behalf_of: this.onBehalfOf,
    };
    const h = (
      await this.withClient((c) =>
        c.request('POST', HOLDS, { body: Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) }),
      )
    ).body as HoldView;
    this.emit(h, holdFields);
    return 0;
  }
}
