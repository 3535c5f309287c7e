import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { idSegment } from '../auth/support.js';
import { agentFields, type AgentView } from './support.js';

/** `svc agent get <id>`: one agent. */
export class AgentGetCommand extends ClientCommand {
  static override paths = [['agent', 'get']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'Show one agent (GET /v1/agents/{id})',
    examples: [['Show an agent', '$0 agent get 0190a000-0000-7000-8000-000000000001']],
  });

  id = Option.String({ name: 'id', required: true });

  async execute(): Promise<number> {
    const agent = (await this.withClient((c) => c.get(`/v1/agents/${idSegment(this.id)}`))).body as AgentView;
    this.emit(agent, agentFields);
    return 0;
  }
}
