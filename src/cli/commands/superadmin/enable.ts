import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { fields, idSegment, type Page } from '../auth/support.js';

/** `svc superadmin enable`: POST /v1/users/{id}/enable on a superadmin (AAL3, DECISIONS.md "Assurance"). */
export class SuperadminEnableCommand extends ClientCommand {
  static override paths = [['superadmin', 'enable']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Enable a superadmin account (superadmin at AAL3)',
    details:
      'Checks that the target is a superadmin (exit 4 otherwise), then calls POST /v1/users/{id}/enable. The session must be stepped ' +
      'up to AAL3 with WebAuthn within the last 15 minutes (else exit 3, `step_up_required`). Needs `-y` when stdin is not a ' +
      'terminal.',
    examples: [['Enable a superadmin', '$0 superadmin enable 0190c8a2-0000-7000-8000-000000000001 -y']],
  });

  id = Option.String({ name: 'user-id' });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'user id');
    await this.requireYes(this.yes, `enable superadmin ${id}`);
    const user = await this.withClient(async (c) => {
      let cursor: string | undefined;
      for (;;) {
        const page = (await c.get('/v1/users/superadmins', { query: { limit: 1000, cursor } })).body as Page<{ id: string }>;
        if (page.items.some((u) => u.id === id)) break;
        if (!page.has_more || page.cursor === undefined)
          throw new CliError(ExitCode.NotFound, 'not_found', `${id} is not a superadmin; use svc users enable for other users`);
        cursor = page.cursor;
      }
      return (await c.request('POST', `/v1/users/${id}/enable`)).body as Record<string, unknown>;
    });
    this.emit(user, fields);
    return 0;
  }
}
