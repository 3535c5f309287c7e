import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { resolveRef } from '../../../client/resolve.js';
import { table } from '../../auth/support.js';
import { budgetOption, pathLine, totalLine, truncationNote, type ExtentView, type PathView } from '../support.js';

type Answer = {
  start: { name: string | null; id: string };
  targets: Array<{ target: { kind: string; name: string | null; id: string }; path: PathView }>;
} & ExtentView;

/** `svc accessmap attack-paths escalation`: principals an agent can come to act as. */
export class AccessmapEscalationCommand extends ClientCommand {
  static override paths = [['accessmap', 'attack-paths', 'escalation']];

  static override usage = BaseCommand.Usage({
    category: 'Access map',
    description: 'Principals an agent can come to act as, with the shortest path to each (GET /v1/m/accessmap/attack-paths/escalation)',
    details:
      'Links: an agent runs its sessions; reading a credential acts as its identity; writing config or code controls its readers. ' +
      'Ranked shortest first, then most certain; `=...?=>` marks a hop resting on observation only.',
    examples: [['Escalation from an agent', '$0 accessmap attack-paths escalation --agent-id <id>']],
  });

  agentId = Option.String('--agent-id', { required: true, description: 'The agent to start from: its id, name or external id' });
  maxDepth = Option.String('--max-depth', { description: 'Principal hops searched, 1..8 (default 6)' });
  limit = Option.String('--limit', { description: 'Paths returned 1..1000; 0 (default) means the engine default' });
  budget = budgetOption();

  async execute(): Promise<number> {
    const res = (
      await this.withClient(async (c) => {
        const ref = await resolveRef(c, this.agentId, ['agent'], '--agent-id');
        return c.get('/v1/m/accessmap/attack-paths/escalation', {
          query: { agent_id: ref.id, max_depth: this.maxDepth, limit: this.limit, budget: this.budget },
        });
      })
    ).body as Answer;
    this.emit(
      res,
      (r) =>
        `${table(r.targets, [
          ['target', (t) => `${t.target.kind}:${t.target.name ?? t.target.id}`],
          ['hops', (t) => t.path.length],
          ['confidence', (t) => t.path.confidence],
          ['path', (t) => pathLine(t.path)],
        ])}${r.truncated ? `\n(${truncationNote(r)})` : ''}`,
    );
    return 0;
  }
}
