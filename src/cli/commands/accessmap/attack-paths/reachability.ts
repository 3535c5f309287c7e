import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { resolveRef } from '../../../client/resolve.js';
import { table } from '../../auth/support.js';
import { budgetOption, pathLine, totalLine, type ExtentView, type PathView } from '../support.js';

type Answer = {
  items: Array<{ resource: { name: string | null; id: string; class: string | null }; mode: string; path: PathView }>;
} & ExtentView;

/** `svc accessmap attack-paths reachability`: resources an agent can reach. */
export class AccessmapReachabilityCommand extends ClientCommand {
  static override paths = [['accessmap', 'attack-paths', 'reachability']];

  static override usage = BaseCommand.Usage({
    category: 'Access map',
    description: 'Resources an agent can reach directly or through escalation (GET /v1/m/accessmap/attack-paths/reachability)',
    examples: [['Blast radius of an agent', '$0 accessmap attack-paths reachability --agent-id <id>']],
  });

  agentId = Option.String('--agent-id', { required: true, description: 'The agent to start from: its id, name or external id' });
  maxDepth = Option.String('--max-depth', { description: 'Principal hops searched, 1..8 (default 6)' });
  limit = Option.String('--limit', { description: 'Resources returned 1..1000; 0 (default) means the engine default' });
  budget = budgetOption();

  async execute(): Promise<number> {
    const res = (
      await this.withClient(async (c) => {
        const ref = await resolveRef(c, this.agentId, ['agent'], '--agent-id');
        return c.get('/v1/m/accessmap/attack-paths/reachability', {
          query: { agent_id: ref.id, max_depth: this.maxDepth, limit: this.limit, budget: this.budget },
        });
      })
    ).body as Answer;
    this.emit(
      res,
      (r) =>
        `${table(r.items, [
          ['resource', (i) => i.resource.name ?? i.resource.id],
          ['class', (i) => i.resource.class],
          ['mode', (i) => i.mode],
          ['hops', (i) => i.path.length],
          ['path', (i) => pathLine(i.path)],
        ])}\n${totalLine(r)}`,
    );
    return 0;
  }
}
