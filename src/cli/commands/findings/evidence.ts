import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { idSegment } from '../auth/support.js';

/** `svc findings evidence <id>`: what a detector saw (access-graph data: a privileged, audited read). */
export class FindingsEvidenceCommand extends ClientCommand {
  static override paths = [['findings', 'evidence']];

  static override usage = BaseCommand.Usage({
    category: 'Findings',
    description:
      "A finding's evidence: the drift item or attack path its detector saw (GET /v1/m/security/findings/{id}/evidence; editor and " +
      'above, audited)',
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const e = (await this.withClient((c) => c.get(`/v1/m/security/findings/${idSegment(this.id)}/evidence`))).body as {
      id: string;
      rule_id: string;
      evidence: Record<string, unknown>;
    };
    this.emit(e, (x) => `finding: ${x.id}\nrule: ${x.rule_id}\n${JSON.stringify(x.evidence, null, 2)}`);
    return 0;
  }
}
