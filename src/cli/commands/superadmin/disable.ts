import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { fields, idSegment, type Page } from '../auth/support.js';

/** `svc superadmin disable`: POST /v1/users/{id}/disable on a superadmin (AAL3, DECISIONS.md "Assurance"). */
export class SuperadminDisableCommand extends ClientCommand {
  static override paths = [['superadmin', 'disable']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Disable a superadmin account (superadmin at AAL3)',
    details:
      'Checks that the target is a superadmin (exit 4 otherwise), then calls POST /v1/users/{id}/disable. The session must be ' +
      'stepped up to AAL3 with WebAuthn within the last 15 minutes (else exit 3, `step_up_required`). Disabling revokes its sessions ' +
      'and API keys; the last active superadmin cannot be disabled (exit 5, `last_superadmin`). Needs `-y` when stdin is not a ' +
      'terminal.',
    examples: [['Disable a superadmin', '$0 superadmin disable 0190c8a2-0000-7000-8000-000000000001 -y']],
  });

  id = Option.String({ name: 'user-id' });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'user id');
    await this.requireYes(this.yes, `disable superadmin ${id}`);
    const user = await this.withClient(async (c) => {
      let cursor: string | undefined;
      for (;;) {
        const page = (await c.get('/v1/users/superadmins', { query: { limit: 1000, cursor } })).body as Page<{ id: string }>;
        if (page.items.some((u) => u.id === id)) break;
        if (!page.has_more || page.cursor === undefined)
          throw new CliError(ExitCode.NotFound, 'not_found', `${id} is not a superadmin; use svc users disable for other users`);
        cursor = page.cursor;
      }
      return (await c.request('POST', `/v1/users/${id}/disable`)).body as Record<string, unknown>;
    });
    this.emit(user, fields);
    return 0;
  }
}
