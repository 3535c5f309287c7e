import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { resolveRef } from '../../client/resolve.js';
import { agentFields, type AgentView } from './support.js';

/** `svc agent get <id>`: one agent. */
export class AgentGetCommand extends ClientCommand {
  static override paths = [['agent', 'get']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'Show one agent (GET /v1/agents/{id}) by id, name or external id',
    examples: [
      ['Show an agent', '$0 agent get 0190a000-0000-7000-8000-000000000001'],
      ['By name or external id', '$0 agent get payments-copilot'],
    ],
  });

  id = Option.String({ name: 'agent', required: true });

  async execute(): Promise<number> {
    const agent = (await this.withClient(async (c) => c.get(`/v1/agents/${(await resolveRef(c, this.id, ['agent'], 'agent')).id}`)))
      .body as AgentView;
    this.emit(agent, agentFields);
    return 0;
  }
}
