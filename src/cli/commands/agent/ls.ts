import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import type { Page } from '../auth/support.js';
import { agentTable, type AgentView } from './support.js';

/** `svc agent ls`: a page of agents. */
export class AgentLsCommand extends ClientCommand {
  static override paths = [['agent', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'List agents (GET /v1/agents), in creation order',
    details:
      'One page per call; when more exist the text output ends with the `--cursor` to continue with, and `-o json` carries ' +
      '`has_more` and `cursor`.',
    examples: [
      ['First page', '$0 agent ls'],
      ['Paused agents as JSON', '$0 agent ls --status paused -o json'],
    ],
  });

  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor (from the previous page)' });
  status = Option.String('--status', { description: 'Only agents with this status: active, paused, disabled' });
  kind = Option.String('--kind', { description: 'Only agents of this kind' });

  async execute(): Promise<number> {
    const page = (
      await this.withClient((c) =>
        c.get('/v1/agents', { query: { limit: this.limit, cursor: this.cursor, status: this.status, kind: this.kind } }),
      )
    ).body as Page<AgentView>;
    this.emit(page, (p) => `${agentTable(p.items)}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`);
    return 0;
  }
}
