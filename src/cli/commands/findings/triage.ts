import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { idSegment } from '../auth/support.js';
import { findingFields, type FindingView } from './support.js';

const STATUSES = ['open', 'acknowledged', 'resolved', 'suppressed'];

/** `svc findings triage <id> --status …`: set a finding's status with a note (audited). */
export class FindingsTriageCommand extends ClientCommand {
  static override paths = [['findings', 'triage']];

  static override usage = BaseCommand.Usage({
    category: 'Findings',
    description: 'Triage a finding: set its status with a note (PATCH /v1/m/security/findings/{id}); audited',
    details: 'With `--version` the change is refused (exit 5, conflict) when someone else triaged the finding since you read it.',
    examples: [
      ['Acknowledge', '$0 findings triage 0190a000-0000-7000-8000-000000000001 --status acknowledged --note "ticket SEC-12"'],
      [
        'Suppress, only if unchanged since version 3',
        '$0 findings triage 0190a000-0000-7000-8000-000000000001 --status suppressed --note "accepted risk" --version 3',
      ],
    ],
  });

  id = Option.String({ name: 'id', required: true });
  status = Option.String('--status', { required: true, description: 'open, acknowledged, resolved or suppressed' });
  note = Option.String('--note', { description: 'Why (kept with the status and in the ledger record)' });
  version = Option.String('--version', { description: 'The version the change is based on (from findings get)' });

  async execute(): Promise<number> {
    if (!STATUSES.includes(this.status)) throw new CliUsageError(`--status must be one of ${STATUSES.join(', ')}`);
    if (this.version !== undefined && !/^[1-9]\d{0,15}$/.test(this.version))
      throw new CliUsageError('--version must be a positive integer');
    const body = {
      status: this.status,
      ...(this.note !== undefined ? { note: this.note } : {}),
      ...(this.version !== undefined ? { version: Number(this.version) } : {}),
    };
    const f = (await this.withClient((c) => c.request('PATCH', `/v1/m/security/findings/${idSegment(this.id)}`, { body })))
      .body as FindingView;
    this.emit(f, findingFields);
    return 0;
  }
}
