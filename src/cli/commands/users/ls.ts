import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { table, type Page } from '../auth/support.js';

export type Member = { id: string; email: string; superadmin: boolean; status: string; role: string; created_at: string };

/** `svc users ls`: members of the tenant with their role. */
export class UsersLsCommand extends ClientCommand {
  static override paths = [['users', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'List the users of the tenant with their role (GET /v1/users)',
    details:
      'The tenant comes from the token when it is bound to one, else from `--tenant`/`SERVICE_TENANT`/the context (required when you ' +
      'can act in several). Pages with `--limit` and `--cursor`.',
    examples: [['List members', '$0 users ls --tenant 0190c8a2-…']],
  });

  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor (from the previous page)' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get('/v1/users', { query: { limit: this.limit, cursor: this.cursor } })))
      .body as Page<Member>;
    this.emit(
      page,
      (p) =>
        `${table(p.items, [
          ['id', (u) => u.id],
          ['email', (u) => u.email],
          ['role', (u) => u.role],
          ['status', (u) => u.status],
          ['superadmin', (u) => u.superadmin],
        ])}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`,
    );
    return 0;
  }
}
