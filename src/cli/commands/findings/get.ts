import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { idSegment } from '../auth/support.js';
import { findingFields, type FindingView } from './support.js';

/** `svc findings get <id>`: one finding. */
export class FindingsGetCommand extends ClientCommand {
  static override paths = [['findings', 'get']];

  static override usage = BaseCommand.Usage({
    category: 'Findings',
    description: 'Show one finding (GET /v1/m/security/findings/{id})',
    examples: [['Show a finding', '$0 findings get 0190a000-0000-7000-8000-000000000001']],
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const f = (await this.withClient((c) => c.get(`/v1/m/security/findings/${idSegment(this.id)}`))).body as FindingView;
    this.emit(f, findingFields);
    return 0;
  }
}
