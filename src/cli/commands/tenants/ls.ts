import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { table, type Page } from '../auth/support.js';

type Org = { id: string; name: string; region: string; status: string; created_at: string };

/** `svc tenants ls`: every live organization (superadmin). */
export class TenantsLsCommand extends ClientCommand {
  static override paths = [['tenants', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'List organizations (tenants) (GET /v1/system/orgs; superadmin)',
    examples: [['List tenants', '$0 tenants ls']],
  });

  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get('/v1/system/orgs', { query: { limit: this.limit, cursor: this.cursor } })))
      .body as Page<Org>;
    this.emit(
      page,
      (p) =>
        `${table(p.items, [
          ['id', (o) => o.id],
          ['name', (o) => o.name],
          ['region', (o) => o.region],
          ['status', (o) => o.status],
          ['created', (o) => o.created_at],
        ])}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`,
    );
    return 0;
  }
}
