import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { resolveRef, type RefKind } from '../../client/resolve.js';
import { edgeTable, type EdgeView } from './support.js';

type NodeView = { id: string; kind: string; ref: string; name: string; class: string | null };
type NeighborsView = {
  node: NodeView;
  links: Array<{ relation: string; direction: string; node: NodeView }>;
  items: EdgeView[];
  has_more: boolean;
  cursor?: string;
};

/** `svc accessmap neighbors`: one node's access edges and structural links. */
export class AccessmapNeighborsCommand extends ClientCommand {
  static override paths = [['accessmap', 'neighbors']];

  static override usage = BaseCommand.Usage({
    category: 'Access map',
    description: "A node's neighbours (GET /v1/m/accessmap/neighbors): its access edges and links (sessions, credentials)",
    examples: [
      ['Everything around an agent', '$0 accessmap neighbors --id payments-copilot'],
      ['Who reads a resource', '$0 accessmap neighbors --id <resource-id> --direction incoming'],
    ],
  });

  id = Option.String('--id', {
    required: true,
    description: 'The node (agent, session, identity or resource): its id, name, external id or natural key',
  });
  kind = Option.String('--kind', { description: 'The node kind, when the id is ambiguous: agent, session, identity, resource' });
  direction = Option.String('--direction', { description: 'outgoing, incoming or both (default both)' });
  limit = Option.String('--limit', { description: 'Edges per page 1..1000; 0 (default) means the engine default' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const kinds: RefKind[] = ['agent', 'session', 'identity', 'resource'];
    const res = (
      await this.withClient(async (c) => {
        const ref = await resolveRef(
          c,
          this.id,
          this.kind !== undefined && kinds.includes(this.kind as RefKind) ? [this.kind as RefKind] : kinds,
          '--id',
        );
        return c.get('/v1/m/accessmap/neighbors', {
          query: { id: ref.id, kind: this.kind ?? ref.kind, direction: this.direction, limit: this.limit, cursor: this.cursor },
        });
      })
    ).body as NeighborsView;
    this.emit(res, (r) => {
      const head = `${r.node.kind} ${r.node.name} (${r.node.id})${r.node.class ? ` class=${r.node.class}` : ''}`;
      const links = r.links.map((l) => `  ${l.direction === 'outgoing' ? '->' : '<-'} ${l.relation} ${l.node.kind} ${l.node.name}`);
      return [head, ...links, edgeTable(r.items), ...(r.has_more ? [`more: --cursor ${r.cursor}`] : [])].join('\n');
    });
    return 0;
  }
}
