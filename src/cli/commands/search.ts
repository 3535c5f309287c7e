import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../client/base-command.js';
import { table } from './auth/support.js';

type Answer = { items: Array<{ kind: string; id: string; name: string; detail: string }>; has_more: boolean; kinds: string[] };

/** `svc search QUERY`: agents, workspaces and graph nodes by name or key (GET /v1/search). */
export class SearchCommand extends ClientCommand {
  static override paths = [['search']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'Find agents, workspaces and access-graph nodes by name or key (GET /v1/search)',
    details: `
      Case-insensitive substring match on names and keys (external id, root path, natural key); agents
      first, then workspaces, then sessions, identities and resources (those only for the editor role
      and above, an audited read). Any name or key shown can be given where a command takes an id.
    `,
    examples: [
      ['Everything about payments', '$0 search payments'],
      ['As JSON', '$0 search s3:// -o json'],
    ],
  });

  query = Option.String({ name: 'query', required: true });
  limit = Option.String('--limit', { description: 'Hits returned, 1..1000 (default 50)' });

  async execute(): Promise<number> {
    const res = (await this.withClient((c) => c.get('/v1/search', { query: { q: this.query, limit: this.limit } }))).body as Answer;
    this.emit(
      res,
      (r) =>
        `${table(r.items, [
          ['kind', (h) => h.kind],
          ['name', (h) => h.name],
          ['key', (h) => h.detail || '-'],
          ['id', (h) => h.id],
        ])}${r.has_more ? '\n(more hits: narrow the query or raise --limit)' : ''}`,
    );
    return 0;
  }
}
