import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { table, type Page } from '../auth/support.js';

type UserView = { id: string; email: string; superadmin: boolean; status: string; created_at: string };

/** `svc superadmin ls`: GET /v1/users/superadmins. */
export class SuperadminLsCommand extends ClientCommand {
  static override paths = [['superadmin', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'List every superadmin, active or disabled (GET /v1/users/superadmins; superadmin)',
    examples: [['List superadmins', '$0 superadmin ls']],
  });

  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get('/v1/users/superadmins', { query: { limit: this.limit, cursor: this.cursor } })))
      .body as Page<UserView>;
    this.emit(
      page,
      (p) =>
        `${table(p.items, [
          ['id', (u) => u.id],
          ['email', (u) => u.email],
          ['status', (u) => u.status],
          ['created', (u) => u.created_at],
        ])}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`,
    );
    return 0;
  }
}
