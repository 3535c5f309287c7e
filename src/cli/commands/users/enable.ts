import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { fields, idSegment } from '../auth/support.js';

/** `svc users enable`: POST /v1/users/{id}/enable (superadmin callers; AAL3 when the target is a superadmin). */
export class UsersEnableCommand extends ClientCommand {
  static override paths = [['users', 'enable']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Enable a disabled user (revoked credentials stay revoked)',
    details:
      'Needs a superadmin. When the target is itself a superadmin the session must be at AAL3 (403 `step_up_required`: step up at ' +
      '/ui/step-up first).',
    examples: [['Enable a user', '$0 users enable 0190c8a2-0000-7000-8000-000000000001']],
  });

  id = Option.String({ name: 'user-id' });

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'user id');
    const user = (await this.withClient((c) => c.request('POST', `/v1/users/${id}/enable`))).body as Record<string, unknown>;
    this.emit(user, fields);
    return 0;
  }
}
