import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { fields, idSegment } from '../auth/support.js';

/** `svc users disable`: POST /v1/users/{id}/disable (superadmin callers; AAL3 when the target is a superadmin). */
export class UsersDisableCommand extends ClientCommand {
  static override paths = [['users', 'disable']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Disable a user: its sessions and API keys stop working at once',
    details:
      'Needs a superadmin. When the target is itself a superadmin the session must be at AAL3 (403 `step_up_required`: step up at ' +
      '/ui/step-up first). The last active superadmin cannot be disabled (409 `last_superadmin`). Needs `-y` when stdin is not a ' +
      'terminal.',
    examples: [['Disable a user', '$0 users disable 0190c8a2-0000-7000-8000-000000000001 -y']],
  });

  id = Option.String({ name: 'user-id' });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'user id');
    await this.requireYes(this.yes, `disable user ${id} and revoke its sessions and API keys`);
    const user = (await this.withClient((c) => c.request('POST', `/v1/users/${id}/disable`))).body as Record<string, unknown>;
    this.emit(user, fields);
    return 0;
  }
}
